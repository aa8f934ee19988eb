package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/syncverse/hub/internal/rig"
)

// loaderProc is one load-generator child as the parent sees it. Its reader goroutine is owned by stop, which
// drains it before Wait; stop kills the child if it still runs.
type loaderProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	errOut *rig.TailBuffer

	mu     sync.Mutex
	status loaderStatus
	result chan loaderResult // the one result line
	ended  chan struct{}     // stdout reached EOF
	once   sync.Once
}

// startLoader runs bin --scenario fleet-loader (bin is hub-bench) and sends it spec.
func startLoader(bin string, spec loaderSpec) (*loaderProc, error) {
	cmd := exec.Command(bin, "--scenario", fleetLoader)
	rig.SetParentDeath(cmd)
	p := &loaderProc{cmd: cmd, errOut: &rig.TailBuffer{Max: 16 << 10}, result: make(chan loaderResult, 1), ended: make(chan struct{})}
	cmd.Stderr = p.errOut
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the load generator %s: %w", bin, err)
	}
	go p.read(out)
	b, _ := json.Marshal(spec)
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		p.stop()
		return nil, fmt.Errorf("send the load generator its spec: %w", err)
	}
	return p, nil
}

func (p *loaderProc) read(r io.Reader) {
	defer close(p.ended)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		kind, data, _ := bytes.Cut(sc.Bytes(), []byte(" "))
		switch string(kind) {
		case "status":
			var s loaderStatus
			if json.Unmarshal(data, &s) == nil {
				p.mu.Lock()
				p.status = s
				p.mu.Unlock()
			}
		case "result":
			var res loaderResult
			if json.Unmarshal(data, &res) == nil {
				select {
				case p.result <- res:
				default: // a loader sends one; a second would be a bug of its own, not a reason to block
				}
			}
		}
	}
}

func (p *loaderProc) latest() loaderStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

// check sends the truth and waits for the verdict, at most within.
func (p *loaderProc) check(truth []byte, within time.Duration) (loaderResult, error) {
	if _, err := p.stdin.Write(append(append([]byte("check "), truth...), '\n')); err != nil {
		return loaderResult{}, fmt.Errorf("load generator %d: send the truth: %w (%s)", p.cmd.Process.Pid, err, p.stderr())
	}
	select {
	case res := <-p.result:
		return res, nil
	case <-p.ended:
		return loaderResult{}, fmt.Errorf("load generator %d ended without a result: %s", p.cmd.Process.Pid, p.stderr())
	case <-time.After(within):
		return loaderResult{}, fmt.Errorf("load generator %d: no result within %v", p.cmd.Process.Pid, within)
	}
}

// stop closes the child's stdin (its signal to end), gives it a moment, kills it if it is still there, and reaps
// it. It is idempotent.
func (p *loaderProc) stop() {
	p.once.Do(func() {
		_ = p.stdin.Close()
		select {
		case <-p.ended:
		case <-time.After(5 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.ended
		}
		_ = p.cmd.Wait()
	})
}

// stderr is the end of what the load generator wrote to its stderr.
func (p *loaderProc) stderr() string { return strings.TrimSpace(p.errOut.String()) }
