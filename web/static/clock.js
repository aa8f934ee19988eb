// The browser's view of Redis's clock, learnt from stream ids (<ms>-<seq>, stamped by Redis at XADD) as they arrive.

export class ServerClock {
  constructor() {
    this.samples = [];
    this.offset = 0;
    this.latencies = [];
  }

  /**
   * Keeps an estimate of how far the browser's clock is from Redis's, from the fastest recent deliveries, so that
   * ages computed from stream ids (stall detection, lease countdowns) survive a skewed laptop clock.
   */
  sample(received, serverMs) {
    if (!Number.isFinite(serverMs)) return;
    const d = received - serverMs;
    this.latencies.push(d);
    if (this.latencies.length > 100) this.latencies.shift();
    this.samples.push(d);
    if (this.samples.length > 200) this.samples.shift();
    if (this.samples.length % 20 === 1) this.offset = Math.min(...this.samples);
  }

  /** A Redis time on the browser's clock, never later than fallback (when it was received). */
  toLocal(serverMs, fallback) {
    return Number.isFinite(serverMs) ? Math.min(serverMs + this.offset, fallback) : fallback;
  }

  /** The median time from XADD to this browser over the last live events, in ms. */
  latency() {
    if (!this.latencies.length) return NaN;
    const s = [...this.latencies].sort((a, b) => a - b);
    return s[s.length >> 1];
  }
}
