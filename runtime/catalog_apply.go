package runtime

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/openprogram/mcpvisor/catalog"
	"github.com/openprogram/mcpvisor/config"
)

// Applying catalog entries (DESIGN K4): each entry is added as POST
// /api/mcp/servers adds a server, through the manager's one serialiser,
// one after another; an entry that fails changes nothing and stops no
// other.

// ApplyEntry names one catalog entry to add. Source and Name pick it;
// File is needed only where the name is in several files of the source
// (a user and a project entry). As, if set, is the name it is added
// under (a host's name that mcpvisor does not accept, or one already
// taken). Config, if set, is laid over the entry's config as a PATCH
// body (C4: fields replace, env and headers merge by key, "" deletes):
// how a template gets the values the user must supply.
type ApplyEntry struct {
	Source catalog.Source  `json:"source"`
	File   string          `json:"file,omitempty"`
	Name   string          `json:"name"`
	As     string          `json:"as,omitempty"`
	Config json.RawMessage `json:"config,omitempty"`
}

// The statuses of an ApplyResult.
const (
	// ApplyAdded: the server was added and saved, and connects as a
	// POST's would; Entry shows it as configured when the answer was
	// built. Entry is absent if another request removed the server in
	// between: it was added all the same.
	ApplyAdded = "added"
	// ApplyRefused: the entry is not in the catalog, is ambiguous, or its
	// config (with the overlay) is invalid; Error says why and Field
	// names the field to blame. Nothing was changed.
	ApplyRefused = "refused"
	// ApplyConflict: a server of that name is configured already; nothing
	// was changed (apply it with "as").
	ApplyConflict = "conflict"
	// ApplySkipped: the request ended (its context was cancelled), or too
	// little of its time was left (see ApplyCatalog), before this entry
	// was tried; nothing was changed.
	ApplySkipped = "skipped"
	// ApplyUnknown: the entry was handed to the manager, which did not
	// answer within applyAnswerWait; it may have been added (list the
	// servers to see).
	ApplyUnknown = "unknown"
)

// MaxApplyEntries bounds the entries of one apply (and of one POST diff's
// "entries"): each is a save of the config file, one after another.
const MaxApplyEntries = 100

// applyAnswerWait bounds the wait for the manager's answer to an entry
// handed to it, whatever the request's context does meanwhile: the
// manager saves and answers at once, so the outcome is known rather than
// guessed.
const applyAnswerWait = 30 * time.Second

// applyWriteMargin is the time left, after the last entry's answer wait,
// for writing the answer (at most MaxApplyEntries results) before the
// write deadline.
const applyWriteMargin = 5 * time.Second

// applyEntryTime is what one entry may rightly take when the manager is
// not stuck: a save of the config file (write, fsync, rename) and the
// start of its connect, which only spawns the server's actor (the
// connect itself goes on after the answer).
const applyEntryTime = time.Second

// applyBudget is the deadline of POST /api/mcp/catalog/apply: routeTimeout
// for reading the catalog (as GET /api/mcp/catalog has), applyEntryTime
// for each of MaxApplyEntries entries, then the answer wait of the last
// one and the write margin: 30 + 100 + 30 + 5 = 165 s.
const applyBudget = routeTimeout + MaxApplyEntries*applyEntryTime + applyAnswerWait + applyWriteMargin

// applyTuning holds the timings of an apply and its hand-off to the
// manager; a zero field takes its default. Tests shorten the timings and
// stand in for the manager (add); nothing else sets them.
type applyTuning struct {
	budget      time.Duration // default applyBudget
	answerWait  time.Duration // default applyAnswerWait
	writeMargin time.Duration // default applyWriteMargin
	// add hands a server to the manager, as AddServer does before it
	// looks the server up (default r.addOperation).
	add func(ctx context.Context, s config.Server) error
}

// applyRouteBudget is the budget of POST /api/mcp/catalog/apply.
func (r *Runtime) applyRouteBudget(*http.Request) time.Duration {
	return cmp.Or(r.apply.budget, applyBudget)
}

// ApplyResult says what happened to one ApplyEntry. Server is the name it
// was (or would have been) added under.
type ApplyResult struct {
	Source catalog.Source `json:"source"`
	File   string         `json:"file,omitempty"`
	Name   string         `json:"name"`
	Server string         `json:"server"`
	Status string         `json:"status"`
	Error  string         `json:"error,omitempty"`
	Field  string         `json:"field,omitempty"`
	// Warnings are the catalog entry's warnings, as GET /api/mcp/catalog
	// lists them: what of the host's entry did not carry over (empty when
	// the entry was not found).
	Warnings []string     `json:"warnings"`
	Entry    *ServerEntry `json:"entry,omitempty"`
}

// CatalogApply is the answer of ApplyCatalog: one result per entry, in
// the order given.
type CatalogApply struct {
	Results []ApplyResult `json:"results"`
}

// ApplyCatalog adds the entries, in order, each as AddServer would. The
// catalog is read once, for the sources named. It fails as a whole only
// when there are more than MaxApplyEntries entries (a *config.FieldError
// on "entries") or the catalog cannot be read (ctx); every other problem
// is the result of its own entry. Once ctx ends, the entries not yet
// tried are ApplySkipped; one already handed to the manager is waited
// for (at most applyAnswerWait, on the runtime's clock), so that a result never says "refused"
// for an entry that was added. If ctx has a deadline, no entry is started
// later than applyAnswerWait plus applyWriteMargin (5 s) before it: the
// call returns, and its answer can be written, by the deadline, with the
// entries it had no time for ApplySkipped.
func (r *Runtime) ApplyCatalog(ctx context.Context, entries []ApplyEntry) (CatalogApply, error) {
	if err := checkEntryCount(len(entries)); err != nil {
		return CatalogApply{}, err
	}
	var sources []catalog.Source
	for _, e := range entries {
		if slices.Contains(catalog.Sources(), e.Source) && !slices.Contains(sources, e.Source) {
			sources = append(sources, e.Source)
		}
	}
	var found []catalog.Entry
	if len(sources) > 0 {
		var err error
		if found, _, err = r.readCatalog(ctx, sources...); err != nil {
			return CatalogApply{}, err
		}
	}
	wait := cmp.Or(r.apply.answerWait, applyAnswerWait)
	// The request's deadline is on the real clock (the write deadline of
	// its connection): it is read once, as the time left, and from then
	// on the runtime's clock measures it, as it does the answer wait.
	deadline, hasDeadline := ctx.Deadline()
	startBy := r.opts.clock.Now().Add(time.Until(deadline) - wait - cmp.Or(r.apply.writeMargin, applyWriteMargin))
	out := CatalogApply{Results: make([]ApplyResult, 0, len(entries))}
	for _, e := range entries {
		skip := ""
		if err := ctx.Err(); err != nil {
			skip = "not tried: " + err.Error()
		} else if hasDeadline && !r.opts.clock.Now().Before(startBy) {
			skip = fmt.Sprintf("not tried: too little of the request's time was left to wait for the manager's answer (%v) and write the answer", wait)
		}
		if skip != "" {
			res := newApplyResult(e)
			res.Status, res.Error = ApplySkipped, skip
			out.Results = append(out.Results, res)
			continue
		}
		out.Results = append(out.Results, r.applyOne(ctx, found, e, wait))
	}
	return out, nil
}

// checkEntryCount refuses more than MaxApplyEntries entries.
func checkEntryCount(n int) error {
	if n > MaxApplyEntries {
		return &config.FieldError{Field: "entries", Message: fmt.Sprintf(`%d entries: at most %d in one request`, n, MaxApplyEntries)}
	}
	return nil
}

func newApplyResult(e ApplyEntry) ApplyResult {
	res := ApplyResult{Source: e.Source, File: e.File, Name: e.Name, Server: e.Name, Warnings: []string{}}
	if e.As != "" {
		res.Server = e.As
	}
	return res
}

// applyOne tries one entry; wait bounds the wait for the manager's answer.
func (r *Runtime) applyOne(ctx context.Context, found []catalog.Entry, e ApplyEntry, wait time.Duration) ApplyResult {
	res := newApplyResult(e)
	refuse := func(err error) ApplyResult {
		res.Status, res.Error = ApplyRefused, err.Error()
		var fe *config.FieldError
		if errors.As(err, &fe) {
			res.Field = fe.Field
		}
		return res
	}
	entry, err := pickEntry(found, e)
	if err != nil {
		return refuse(err)
	}
	res.File, res.Warnings = entry.File, nonNil(entry.Warnings)
	s, err := CatalogServer(entry, res.Server, e.Config)
	if err != nil {
		return refuse(err)
	}
	// The request's ctx was live a moment ago; from here on the outcome
	// is the manager's answer, not the request's end.
	answer, cancel := clockwork.WithTimeout(context.WithoutCancel(ctx), r.opts.clock, wait)
	defer cancel()
	add := r.apply.add
	if add == nil {
		add = r.addOperation
	}
	err = add(answer, s)
	switch {
	case errors.Is(err, context.DeadlineExceeded) && answer.Err() != nil:
		res.Status, res.Error = ApplyUnknown, fmt.Sprintf("the manager did not answer within %v: the server may have been added", wait)
	case errors.Is(err, ErrServerExists):
		res.Status, res.Error = ApplyConflict, err.Error()
	case err != nil:
		return refuse(err)
	default:
		// Added: so it says even if another request removed it before
		// this lookup (AddServer would answer ErrUnknownServer then).
		res.Status = ApplyAdded
		if added, err := r.entryAfter(s.Name, nil); err == nil {
			res.Entry = &added
		}
	}
	return res
}

// pickEntry finds the catalog entry e names.
func pickEntry(found []catalog.Entry, e ApplyEntry) (catalog.Entry, error) {
	switch {
	case !slices.Contains(catalog.Sources(), e.Source):
		return catalog.Entry{}, &config.FieldError{Field: "source", Message: fmt.Sprintf("unknown catalog source %q (known: %v)", e.Source, catalog.Sources())}
	case e.Name == "":
		return catalog.Entry{}, &config.FieldError{Field: "name", Message: `"name" is missing: the entry's name in its source`}
	}
	var match []catalog.Entry
	for _, c := range found {
		if c.Source == e.Source && c.Name == e.Name && (e.File == "" || c.File == e.File) {
			match = append(match, c)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		field := "name"
		if e.File != "" {
			field = "file"
		}
		return catalog.Entry{}, &config.FieldError{Field: field, Message: fmt.Sprintf("no entry %q in the catalog's %s files", e.Name, e.Source)}
	default:
		files := make([]string, len(match))
		for i, m := range match {
			files[i] = m.File
		}
		return catalog.Entry{}, &config.FieldError{Field: "file", Message: fmt.Sprintf("%q is in several %s files; say which in \"file\": %s", e.Name, e.Source, strings.Join(files, ", "))}
	}
}

// CatalogServer is the server a catalog entry becomes under name, with
// overlay (if any) laid over its config as a PATCH body, validated as
// AddServer validates. The error is a *config.FieldError naming the
// field ("as" for a name mcpvisor does not accept).
func CatalogServer(entry catalog.Entry, name string, overlay json.RawMessage) (config.Server, error) {
	s, err := entryServer(name, entry.Config)
	if err != nil {
		return config.Server{}, err
	}
	if err := config.ValidateName(name); err != nil {
		return config.Server{}, &config.FieldError{Field: "as", Message: err.Error() + `: give another name in "as"`}
	}
	if len(overlay) > 0 {
		return config.ApplyPatch(s, overlay)
	}
	if err := s.Validate(); err != nil {
		return config.Server{}, err
	}
	return s, nil
}
