package redact

// Truncated ends a line that [Scrubber.Line] cut.
const Truncated = " …[line truncated]"

// Line returns one line of a server's output (a stderr line, a log
// message) as it may leave the connection: scrubbed, then cut to max bytes
// and marked with Truncated if it is longer or if cut says an earlier part
// was already dropped. Scrubbing comes first, so that a cut never exposes
// part of a secret; a writer that collects a long line collects
// [Scrubber.Longest] past max, so that a secret crossing the cut is still
// seen whole.
func (s *Scrubber) Line(text string, max int, cut bool) string {
	text = s.String(text)
	if cut || len(text) > max {
		text = s.Cut(text, max) + Truncated
	}
	return text
}
