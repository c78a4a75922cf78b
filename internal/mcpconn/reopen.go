package mcpconn

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// How a subscription stream that ended inside a live session is reopened.
// A stream that lived reopenStableAfter was fine: its end starts the
// backoff afresh. Ends in quicker succession are reopened maxQuickReopens
// times, the delay doubling from reopenFirstDelay; then the URI waits for
// the next session (a server that refuses every stream cannot keep us
// busy).
const (
	reopenFirstDelay  = 100 * time.Millisecond
	reopenMaxDelay    = 30 * time.Second
	reopenStableAfter = time.Minute
	maxQuickReopens   = 5
)

// reopener reopens the subscription streams of one Conn that the server
// ended, for the URIs the host still wants. It runs on goroutines of its
// own (never the transport's reader or an actor's) that Conn.Close waits
// for.
type reopener struct {
	cs      *mcp.ClientSession
	subs    Subscriptions
	logger  *slog.Logger
	timeout time.Duration // each Subscribe's bound (timeout_seconds)

	ctx    context.Context // ends with the Conn
	cancel context.CancelFunc
	wg     sync.WaitGroup

	locks uriLocks // each URI's subscribe and unsubscribe, with Conn's

	mu   sync.Mutex
	uris map[string]*reopenState // URIs whose stream ended, while wanted
}

// reopenState is one URI's reopening in this session.
type reopenState struct {
	backoff *backoff.ExponentialBackOff
	quick   int       // reopens since the last stable stream
	opened  time.Time // when the stream was last (re)opened
	busy    bool      // a reopen is waiting or running
	gaveUp  bool
}

func newReopener(cs *mcp.ClientSession, subs Subscriptions, logger *slog.Logger, timeout time.Duration) *reopener {
	ctx, cancel := context.WithCancel(context.Background())
	return &reopener{cs: cs, subs: subs, logger: logger, timeout: timeout, ctx: ctx, cancel: cancel, uris: map[string]*reopenState{}}
}

// ended is told that uri's stream ended. It does not block.
func (r *reopener) ended(uri string) {
	if r.ctx.Err() != nil || r.subs == nil {
		return
	}
	if !r.subs.Wants(uri) {
		r.forget(uri)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx.Err() != nil {
		return
	}
	st := r.uris[uri]
	if st == nil {
		st = &reopenState{backoff: &backoff.ExponentialBackOff{
			InitialInterval: reopenFirstDelay, RandomizationFactor: 0.5, Multiplier: 2, MaxInterval: reopenMaxDelay,
		}, opened: time.Now()}
		st.backoff.Reset()
		r.uris[uri] = st
	}
	switch {
	case st.busy || st.gaveUp:
		return
	case time.Since(st.opened) >= reopenStableAfter:
		st.quick = 0
		st.backoff.Reset()
	case st.quick >= maxQuickReopens:
		st.gaveUp = true
		r.logger.Warn("the server keeps ending the subscription stream of a resource; it is reopened at the next session only",
			"uri", uri, "reopens", st.quick)
		return
	}
	st.quick++
	st.busy = true
	delay := st.backoff.NextBackOff()
	r.wg.Add(1)
	go r.reopen(uri, st, delay)
}

// forget drops uri's reopening state: the host stopped wanting it, or
// subscribed it afresh (which starts its backoff, and its giving up,
// anew). A reopen waiting for uri finds the host's wish when it runs.
func (r *reopener) forget(uri string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.uris, uri)
}

// reopen waits delay, then ends the SDK's record of uri's dead stream
// (Unsubscribe) and opens a new one (Subscribe), unless the host stopped
// wanting it meanwhile.
func (r *reopener) reopen(uri string, st *reopenState, delay time.Duration) {
	defer r.wg.Done()
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.ctx.Done():
		return
	}
	ctx, cancel := context.WithTimeout(r.ctx, r.timeout)
	defer cancel()
	unlock, err := r.locks.lock(ctx, uri)
	if err != nil {
		// The URI's lock was busy for timeout_seconds: the next end of its
		// stream may try again.
		r.mu.Lock()
		st.busy = false
		r.mu.Unlock()
		return
	}
	defer unlock()
	if !r.subs.Wants(uri) || r.ctx.Err() != nil {
		// The host's Unsubscribe dropped the SDK's record already.
		r.forget(uri)
		return
	}
	// Unsubscribe only drops the SDK's record (and cancels the ended
	// listen); without it Subscribe would do nothing.
	_ = r.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	// From here an end is the new stream's, and counts.
	r.mu.Lock()
	st.opened, st.busy = time.Now(), false
	r.mu.Unlock()
	r.subscribeLocked(ctx, uri, "reopening a resource subscription failed")
}

// subscribe subscribes the session to uri if the host still wants it,
// under uri's lock, logging failed with the error of a refusal.
func (r *reopener) subscribe(ctx context.Context, uri, failed string) {
	unlock, err := r.locks.lock(ctx, uri)
	if err != nil {
		return
	}
	defer unlock()
	r.subscribeLocked(ctx, uri, failed)
}

// subscribeLocked is subscribe for a caller holding uri's lock.
func (r *reopener) subscribeLocked(ctx context.Context, uri, failed string) {
	if !r.subs.Wants(uri) || r.ctx.Err() != nil {
		return
	}
	if err := r.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil && r.ctx.Err() == nil {
		r.logger.Warn(failed, "uri", uri, "error", err)
	}
	// The last holder may have left while we subscribed (its Unsubscribe
	// waits for the lock we hold, so it finds nothing to end), or the
	// Conn began closing (the SDK's Close may have cancelled its streams
	// before ours was made, which would keep its goroutine waiting). A
	// holder that came since waits for the lock: its Subscribe follows
	// this Unsubscribe.
	if !r.subs.Wants(uri) || r.ctx.Err() != nil {
		_ = r.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	}
}

// hostSubscribe is Conn.Subscribe's request, under uri's lock. A fresh
// subscription starts the URI's reopening afresh.
func (r *reopener) hostSubscribe(ctx context.Context, uri string) error {
	unlock, err := r.locks.lock(ctx, uri)
	if err != nil {
		return err
	}
	defer unlock()
	r.forget(uri)
	err = r.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	// The Conn began closing (or its session ended) meanwhile: the SDK's
	// Close may have cancelled every stream before this one was made,
	// which would keep its goroutine waiting for ever. stop comes before
	// the SDK's Close, so this sees it.
	if r.ctx.Err() != nil {
		_ = r.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	}
	return err
}

// hostUnsubscribe is Conn.Unsubscribe's request, under uri's lock; the
// URI's reopening state goes with it.
func (r *reopener) hostUnsubscribe(ctx context.Context, uri string) error {
	unlock, err := r.locks.lock(ctx, uri)
	if err != nil {
		return err
	}
	defer unlock()
	r.forget(uri)
	return r.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
}

// maxResubscribes bounds the subscribe requests a new session sends at a
// time for the URIs the host wants.
const maxResubscribes = 4

// resubscribeAll subscribes a new session to every wanted URI, so that a
// reconnect (or a new session after a restart) keeps the host's
// subscriptions. It runs once the session is up, in the background (the
// Conn's Close stops and waits for it), maxResubscribes URIs at a time,
// each within timeout_seconds: a server that never answers a subscribe,
// or many URIs, cannot fail the session or hold it up. The price: an
// update the server sends between the session being ready and its
// subscribe of the URI was not asked for, hence is lost (a host that
// cares reads the resource again when the server is ready). A URI the
// server refuses is logged and stays wanted: the next session asks again
// (on 2026-07-28, where the refusal ends the URI's stream later, the
// reopener asks again first).
func (r *reopener) resubscribeAll() {
	if r.subs == nil {
		return
	}
	res := r.cs.InitializeResult()
	if res == nil || res.Capabilities == nil || res.Capabilities.Resources == nil || !res.Capabilities.Resources.Subscribe {
		return
	}
	uris := r.subs.URIs()
	if len(uris) == 0 {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		var wg sync.WaitGroup
		defer wg.Wait()
		slots := make(chan struct{}, maxResubscribes)
		for _, uri := range uris {
			select {
			case slots <- struct{}{}:
			case <-r.ctx.Done():
				return
			}
			wg.Go(func() {
				defer func() { <-slots }()
				ctx, cancel := context.WithTimeout(r.ctx, r.timeout)
				defer cancel()
				r.subscribe(ctx, uri, "the server refused a resource subscription again")
			})
		}
	}()
}

// stop ends the reopening: none starts from now on, and the waiting ones
// give up.
func (r *reopener) stop() {
	r.mu.Lock()
	r.cancel()
	r.mu.Unlock()
}

// wait waits for the reopens that were running when stop was called (once
// the session is closed, their requests fail at once).
func (r *reopener) wait() { r.wg.Wait() }
