package sse

import "context"

// Shutdown waits until every raw stream has ended; streams served by net/http are the HTTP server's to wait
// for. Streams end when their subscriptions do, so close the hub first. If ctx ends first, Shutdown cuts the
// connections left, waits for their goroutines and returns ctx's error.
func (h *Handler) Shutdown(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		h.cancel()
		return nil
	case <-ctx.Done():
	}
	h.cancel()
	h.reg.mu.Lock()
	cut := h.reg.wheel.all()
	h.reg.mu.Unlock()
	for _, d := range cut {
		_ = d.nc.Close() // ends a write in progress
		d.sub.Close()    // wakes an idle stream to finish
	}
	<-done
	return ctx.Err()
}
