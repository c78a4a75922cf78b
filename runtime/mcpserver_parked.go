package runtime

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/tools"
)

// Parked calls: the gateway's side of multi round-trip requests
// (SEP-2322). On protocol 2026-07-28 a server may ask its client only
// through its answer to the client's request: an input-required result
// holding the questions and an opaque request state, which the client
// retries with its answers. A gateway client on that protocol that
// declared something the gateway can ask (sampling, elicitation, roots)
// gets its call run as a parked call: the runtime's call runs on a
// goroutine of its own, under a context that is not the client's request
// (which ends when the gateway answers input-required) but bounded. When
// the upstream server asks and the forwarder routes the question to that
// call, the gateway answers the client's request with the questions
// pending (all of them, batched into one InputRequests map) and a fresh
// token as request state; the client's retry brings the answers, which go
// to the waiting upstream requests (checked there as a directly asked
// client's are), and waits again for the result or the next questions.
//
// The upstream call ends (is cancelled) when the client's request of the
// current round is cancelled, when the client does not retry within the
// park timeout, when the client's session ends, and when the gateway
// server stops (its context, Runtime.Shutdown). A gateway server holds at
// most MaxParkedCalls parked calls, a client session MaxParkedCallsPerSession;
// past either, the server's question fails with an error naming the limit.

const (
	// MaxParkedCalls is how many calls one gateway server holds parked
	// (answered input-required, waiting for the client's retry).
	MaxParkedCalls = 64
	// MaxParkedCallsPerSession is how many of them one client session
	// holds.
	MaxParkedCallsPerSession = 16
	// DefaultParkTimeout is how long a parked call waits for the client's
	// retry before it is cancelled (MCPServerOptions.ParkTimeout).
	DefaultParkTimeout = 60 * time.Second
	// maxParkedQuestions bounds the questions one call has pending or
	// open at once.
	maxParkedQuestions = 32
)

// errTooManyParkedCalls is the error a server's question gets when the
// gateway cannot park its call (MaxParkedCalls, MaxParkedCallsPerSession);
// it goes to the upstream server only, never to a host's request.
var errTooManyParkedCalls = errors.New("too many parked gateway calls")

// errParkTimeout ends a parked call whose client did not retry in time.
var errParkTimeout = errors.New("the MCP host's client did not retry its parked call in time")

// parkedCalls are one gateway server's parked calls, by token.
type parkedCalls struct {
	life    context.Context // the gateway server's: every upstream call's parent
	stop    context.CancelFunc
	timeout time.Duration

	mu         sync.Mutex
	closed     bool
	byToken    map[string]*parkedCall
	perSession map[*mcp.ServerSession]int
	watched    map[*mcp.ServerSession]bool // sessions whose end is watched
	running    sync.WaitGroup              // the upstream calls' goroutines
}

func newParkedCalls(ctx context.Context, timeout time.Duration) *parkedCalls {
	if timeout <= 0 {
		timeout = DefaultParkTimeout
	}
	life, stop := context.WithCancel(ctx)
	return &parkedCalls{life: life, stop: stop, timeout: timeout, byToken: map[string]*parkedCall{},
		perSession: map[*mcp.ServerSession]int{}, watched: map[*mcp.ServerSession]bool{}}
}

// parkedCall is one gateway call run in rounds.
type parkedCall struct {
	calls   *parkedCalls
	session *mcp.ServerSession
	tool    string
	ctx     context.Context // the upstream call's
	cancel  context.CancelCauseFunc
	done    chan struct{} // closed once res and err are the call's answer
	res     *mcp.CallToolResult
	err     error
	asked   chan struct{} // a question was added to pending (one slot)

	mu      sync.Mutex
	token   string // the last round's, registered in calls; set once parked
	seq     int
	pending []*question // asked by the server, not yet put to the client
	open    []*question // put to the client in the last round
	round   *round      // the client's request being served; nil between rounds
	timer   *time.Timer // the park timeout, between rounds
}

// round is one client request of a parked call.
type round struct {
	ctx      context.Context
	progress any // the request's progress token (nil: none)
}

// question is one request of the server's waiting for the client.
type question struct {
	id     string
	params mcp.InputRequest
	answer chan answer // one slot: the answerer never waits
}

type answer struct {
	res mcp.InputResponse
	err error
}

// start begins a parked call of tool for session: run is the upstream
// call, under the call's context (made with prepare, which gets it first).
// It fails once the gateway server stopped.
func (p *parkedCalls) start(session *mcp.ServerSession, tool string, prepare func(*parkedCall) func() (*mcp.CallToolResult, error)) (*parkedCall, error) {
	ctx, cancel := context.WithCancelCause(p.life)
	pc := &parkedCall{calls: p, session: session, tool: tool, ctx: ctx, cancel: cancel,
		done: make(chan struct{}), asked: make(chan struct{}, 1)}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		cancel(nil)
		return nil, fmt.Errorf("calling %s through the gateway: %w", tool, ErrShuttingDown)
	}
	p.running.Add(1) // under mu, before closed: close's Wait sees it
	p.mu.Unlock()
	run := prepare(pc) // only now: it records the call with the forwarder
	go func() {
		defer p.running.Done()
		defer cancel(nil)
		pc.res, pc.err = run()
		close(pc.done)
	}()
	return pc, nil
}

// serve waits for the call's answer, or for questions to put to the
// client (then answers input-required), or for the end of the client's
// request under ctx (which ends the call). The caller set pc.round.
func (pc *parkedCall) serve(ctx context.Context) (*mcp.CallToolResult, error) {
	for {
		select {
		case <-pc.done:
			pc.calls.drop(pc)
			return pc.res, pc.err
		case <-ctx.Done():
			pc.cancel(fmt.Errorf("the MCP host's client ended its call: %w", context.Cause(ctx)))
			pc.calls.drop(pc)
			return nil, ctx.Err()
		case <-pc.asked:
			if res := pc.inputRequired(); res != nil {
				return res, nil
			}
		}
	}
}

// inputRequired is the answer that puts the pending questions to the
// client, parking the call (nil: nothing to ask, or the call cannot be
// parked and the questions failed).
func (pc *parkedCall) inputRequired() *mcp.CallToolResult {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	select {
	case <-pc.done:
		return nil // the answer is there: the questions are moot
	default:
	}
	if len(pc.pending) == 0 {
		return nil
	}
	// A fresh token each round: a round's request state is good for its
	// one retry, and a replayed earlier one is unknown.
	token, err := pc.calls.park(pc, pc.token)
	if err != nil {
		for _, q := range pc.pending {
			q.answer <- answer{err: err}
		}
		pc.pending = nil
		return nil
	}
	pc.token = token
	reqs := make(mcp.InputRequestMap, len(pc.pending))
	for _, q := range pc.pending {
		reqs[q.id] = q.params
	}
	pc.open = append(pc.open, pc.pending...)
	pc.pending = nil
	pc.round = nil
	if pc.timer == nil {
		pc.timer = time.AfterFunc(pc.calls.timeout, func() {
			pc.cancel(errParkTimeout)
			pc.calls.drop(pc)
		})
	} else {
		pc.timer.Reset(pc.calls.timeout)
	}
	return &mcp.CallToolResult{InputRequests: reqs, RequestState: pc.token}
}

// ask puts params to the client in the call's next round and waits for
// its answer, the end of ctx (the server gave up) or of the call.
func (pc *parkedCall) ask(ctx context.Context, params mcp.InputRequest) (mcp.InputResponse, error) {
	q := &question{params: params, answer: make(chan answer, 1)}
	pc.mu.Lock()
	if len(pc.pending)+len(pc.open) >= maxParkedQuestions {
		pc.mu.Unlock()
		return nil, fmt.Errorf("asking the MCP host's client: more than %d questions at once in one call", maxParkedQuestions)
	}
	pc.seq++
	q.id = "q" + strconv.Itoa(pc.seq)
	pc.pending = append(pc.pending, q)
	pc.mu.Unlock()
	select {
	case pc.asked <- struct{}{}:
	default: // the handler has been told already
	}
	select {
	case a := <-q.answer:
		return a.res, a.err
	case <-ctx.Done():
		pc.withdraw(q)
		return nil, fmt.Errorf("asking the MCP host's client: %w", context.Cause(ctx))
	case <-pc.ctx.Done():
		return nil, fmt.Errorf("asking the MCP host's client: %w", context.Cause(pc.ctx))
	}
}

// withdraw takes back a question nobody waits for, unless it was put to
// the client already (its answer then lands in the slot nobody reads).
func (pc *parkedCall) withdraw(q *question) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	for i, p := range pc.pending {
		if p == q {
			pc.pending = append(pc.pending[:i], pc.pending[i+1:]...)
			return
		}
	}
}

// progress passes the server's progress report to the client under the
// progress token of the current round's request; between rounds it has
// nowhere to go.
func (pc *parkedCall) progress(p tools.Progress) {
	pc.mu.Lock()
	r := pc.round
	pc.mu.Unlock()
	if r == nil || r.progress == nil {
		return
	}
	// Best effort: a report after the answer, or to a client gone, has
	// nowhere to go.
	_ = pc.session.NotifyProgress(r.ctx, &mcp.ProgressNotificationParams{ProgressToken: r.progress, Progress: p.Progress, Total: p.Total, Message: p.Message})
}

// resume is a client's retry (requestState set) of tool under ctx: the
// answers go to the questions of the last round (a question left
// unanswered fails), then it serves the call's next round.
func (p *parkedCalls) resume(ctx context.Context, req *mcp.CallToolRequest, tool string) (*mcp.CallToolResult, error) {
	p.mu.Lock()
	pc := p.byToken[req.Params.RequestState]
	p.mu.Unlock()
	if pc == nil || pc.session != req.Session || pc.tool != tool {
		return nil, badRequestState("it is no parked call of this tool and client session (unknown, expired or finished)")
	}
	pc.mu.Lock()
	switch {
	case pc.round != nil:
		pc.mu.Unlock()
		return nil, badRequestState("its call is being retried already")
	case !pc.timer.Stop():
		pc.mu.Unlock()
		return nil, badRequestState(fmt.Sprintf("its call waited longer than %s for the retry and was cancelled", p.timeout))
	}
	open := pc.open
	pc.open = nil
	pc.round = &round{ctx: ctx, progress: req.Params.GetProgressToken()}
	pc.mu.Unlock()
	for _, q := range open {
		res, ok := req.Params.InputResponses[q.id]
		if !ok {
			q.answer <- answer{err: errBadAnswer(fmt.Sprintf("no answer to input request %q", q.id))}
			continue
		}
		q.answer <- answer{res: res}
	}
	return pc.serve(ctx)
}

// badRequestState is the JSON-RPC error of a retry whose requestState
// the gateway cannot take.
func badRequestState(why string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState: " + why}
}

// park registers pc under a new token, within the limits; the first call
// of a session parked has the session's end watched. A call parked
// already (under old) moves to the new token: old is good no more.
func (p *parkedCalls) park(pc *parkedCall, old string) (string, error) {
	var raw [24]byte
	_, _ = rand.Read(raw[:]) // never fails (crypto/rand panics rather)
	token := base64.RawURLEncoding.EncodeToString(raw[:])
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return "", fmt.Errorf("asking the MCP host's client: %w", ErrShuttingDown)
	case old != "" && p.byToken[old] == pc:
		delete(p.byToken, old)
		p.byToken[token] = pc
		return token, nil
	case old != "":
		return "", errors.New("asking the MCP host's client: its parked call ended")
	case len(p.byToken) >= MaxParkedCalls:
		return "", fmt.Errorf("asking the MCP host's client: %w (at most %d per gateway server, MaxParkedCalls)", errTooManyParkedCalls, MaxParkedCalls)
	case p.perSession[pc.session] >= MaxParkedCallsPerSession:
		return "", fmt.Errorf("asking the MCP host's client: %w (at most %d per client session, MaxParkedCallsPerSession)", errTooManyParkedCalls, MaxParkedCallsPerSession)
	}
	p.byToken[token] = pc
	p.perSession[pc.session]++
	if !p.watched[pc.session] {
		p.watched[pc.session] = true
		// Wait returns once the session's connection closed, whoever
		// closed it: its parked calls have nobody to retry them. (The
		// SDK offers no session end to select on, so this goroutine
		// lasts as long as the host's session, past the gateway's end.)
		session := pc.session
		go func() {
			_ = session.Wait()
			p.sessionEnded(session)
		}()
	}
	return token, nil
}

// drop unregisters pc (once parked; again: nothing) and stops its timer.
func (p *parkedCalls) drop(pc *parkedCall) {
	pc.mu.Lock()
	token := pc.token
	if pc.timer != nil {
		pc.timer.Stop()
	}
	pc.mu.Unlock()
	if token == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byToken[token] != pc {
		return
	}
	delete(p.byToken, token)
	if p.perSession[pc.session]--; p.perSession[pc.session] <= 0 {
		delete(p.perSession, pc.session)
	}
}

// sessionEnded cancels and drops the parked calls of session.
func (p *parkedCalls) sessionEnded(session *mcp.ServerSession) {
	p.mu.Lock()
	delete(p.watched, session)
	var gone []*parkedCall
	for _, pc := range p.byToken {
		if pc.session == session {
			gone = append(gone, pc)
		}
	}
	p.mu.Unlock()
	for _, pc := range gone {
		pc.cancel(errors.New("the MCP host's client session ended"))
		p.drop(pc)
	}
}

// close stops every call (parked or running) and waits for their
// goroutines; nothing parks afterwards.
func (p *parkedCalls) close() {
	p.mu.Lock()
	p.closed = true
	all := make([]*parkedCall, 0, len(p.byToken))
	for _, pc := range p.byToken {
		all = append(all, pc)
	}
	p.mu.Unlock()
	p.stop()
	for _, pc := range all {
		p.drop(pc)
	}
	p.running.Wait()
}
