package exampleserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// InitializeLog is the file in [Options.InitializeDir] that gets one line
// per opening handshake: "<name> <in flight>\n", where in flight counts
// the handshakes (this one included) that were waiting at that moment.
const InitializeLog = "initialize.log"

// inflightPrefix names the file a handshake keeps in InitializeDir while
// it waits; arrivedPrefix the file it leaves there for the barrier.
const (
	inflightPrefix = "inflight-"
	arrivedPrefix  = "arrived-"
)

// Bounds of the barrier's wait: how long at most (unless
// Options.InitializeBarrierWait says), and how often it looks.
const (
	barrierWait = 30 * time.Second
	barrierPoll = 5 * time.Millisecond
)

// slowInit delays a session's opening handshake (initialize, or
// server/discover on protocol 2026-07-28, whichever comes first) and
// records it, so that a test can make a server slow to start and count
// how many servers a client starts at once.
type slowInit struct {
	delay       time.Duration
	dir         string
	name        string
	barrier     int
	barrierWait time.Duration
	once        sync.Once
}

// middleware delays the first handshake request, then hands it on.
func (s *slowInit) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "initialize" || method == "server/discover" {
			var err error
			s.once.Do(func() { err = s.wait(ctx) })
			if err != nil {
				return nil, err
			}
		}
		return next(ctx, method, req)
	}
}

// wait holds the handshake for the delay. Its in-flight file is gone
// before the answer is written, so a client never sees more handshakes in
// flight than the log says.
func (s *slowInit) wait(ctx context.Context) error {
	if s.dir != "" {
		mark, err := os.CreateTemp(s.dir, inflightPrefix+"*")
		if err != nil {
			return fmt.Errorf("marking the handshake in flight: %w", err)
		}
		mark.Close()
		defer os.Remove(mark.Name())
		if err := s.record(); err != nil {
			return err
		}
		if err := s.awaitBarrier(ctx); err != nil {
			return err
		}
	}
	t := time.NewTimer(s.delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// record appends this handshake's line to the log: one write on an
// O_APPEND file, so lines of concurrent servers never interleave.
func (s *slowInit) record() error {
	n, err := countPrefix(s.dir, inflightPrefix)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(s.dir, InitializeLog), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("opening the handshake log: %w", err)
	}
	_, err = fmt.Fprintf(f, "%s %d\n", s.name, n)
	return errors.Join(err, f.Close())
}

// awaitBarrier marks this handshake arrived (after it recorded itself, so
// the ones it releases were in flight when it counted them) and waits
// until s.barrier handshakes have arrived in s.dir, or the bound passed
// (then it goes on: the log shows fewer in flight).
func (s *slowInit) awaitBarrier(ctx context.Context) error {
	if s.barrier <= 0 {
		return nil
	}
	mark, err := os.CreateTemp(s.dir, arrivedPrefix+"*")
	if err != nil {
		return fmt.Errorf("marking the handshake arrived: %w", err)
	}
	mark.Close()
	bound := s.barrierWait
	if bound <= 0 {
		bound = barrierWait
	}
	give := time.NewTimer(bound)
	defer give.Stop()
	tick := time.NewTicker(barrierPoll)
	defer tick.Stop()
	for {
		n, err := countPrefix(s.dir, arrivedPrefix)
		if err != nil || n >= s.barrier {
			return err
		}
		select {
		case <-tick.C:
		case <-give.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// countPrefix counts the files in dir whose names begin with prefix.
func countPrefix(dir, prefix string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("counting handshakes: %w", err)
	}
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			n++
		}
	}
	return n, nil
}
