package catalog

import "io"

// MaxStringBytes is where a string of a walked JSON file is cut short:
// the decoder is given about its first MaxStringBytes and never the rest.
// jsontext holds a token whole, even one it skips, and doubles its buffer
// to do so: a 50 MiB file pasted into Claude Code's history would cost
// over 100 MiB to step over. Cut, any string costs the walk about four
// times this in allocations, whatever its length up to the file's bound.
// Only skipped strings may be cut: a cut in a key or a kept value is
// refused as a value over its bound (it is at least MaxKeptBytes long).
const MaxStringBytes = MaxKeptBytes

// stringCutter is the decoder's input: it passes the file through as it
// is, until the decoder holds over MaxStringBytes of one string still
// unfinished (boundedReader calls begin then); from there it leaves out
// the rest of that string, up to its closing quote, at a point that
// leaves no escape half written, and records where it cut: the decoder's
// offsets are in its output, a file's in its input. Only a long string is
// lexed here (the decoder lexes everything else once), so an ordinary
// file costs nothing more.
//
// It tracks the string by its quote and escapes alone, which is exact for
// valid JSON; in corrupt JSON the decoder finds the error (a control
// character in a cut part is passed on for it to find; an invalid escape
// there is not).
type stringCutter struct {
	r    io.Reader
	in   bool  // cutting a string: the rest of it, to its quote, is left out
	esc  bool  // the byte before began an escape
	hex  int   // hex digits of a \u escape still to come
	drop bool  // the next bytes are left out (no escape is half written)
	out  int64 // bytes passed on
	cuts []stringCut
}

// stringCut is one cut: dropped input bytes left out before output byte at.
type stringCut struct{ at, dropped int64 }

// begin starts cutting the token the decoder holds unfinished, unread
// (its unread buffer), if it is a string: a number or a literal is left
// to MaxTokenBytes.
func (c *stringCutter) begin(unread []byte) {
	i := 0
	for i < len(unread) && isSpaceOrSeparator(unread[i]) {
		i++
	}
	if c.in || i == len(unread) || unread[i] != '"' {
		return
	}
	s := stringCutter{in: true}
	for _, ch := range unread[i+1:] {
		s.step(ch)
		if !s.in {
			return // a whole string: not the unfinished token
		}
	}
	c.in, c.esc, c.hex, c.drop = true, s.esc, s.hex, false
	c.cuts = append(c.cuts, stringCut{at: -1})
}

func (c *stringCutter) Read(p []byte) (int, error) {
	for {
		n, err := c.r.Read(p)
		m := c.filter(p[:n])
		// A chunk that was all cut is not a read of 0 bytes: read on.
		if m > 0 || err != nil || n == 0 {
			return m, err
		}
	}
}

// filter rewrites b in place and returns the length it kept.
func (c *stringCutter) filter(b []byte) int {
	m := 0
	for i := 0; i < len(b); {
		if !c.in { // the string ended: the rest as it is
			if m != i {
				copy(b[m:], b[i:])
			}
			m += len(b) - i
			break
		}
		if c.drop && !c.esc && c.hex == 0 { // up to a quote, a backslash, or a control character, which the decoder must see
			e := i
			for e < len(b) && b[e] != '"' && b[e] != '\\' && b[e] >= 0x20 {
				e++
			}
			if e > i {
				c.cuts[len(c.cuts)-1].dropped += int64(e - i)
				i = e
				continue
			}
		}
		ch := b[i]
		clean := !c.esc && c.hex == 0 // a cut before ch leaves no escape half written
		c.step(ch)
		if c.in && clean && !c.drop {
			c.drop = true
			c.cuts[len(c.cuts)-1].at = c.out + int64(m)
		}
		if c.in && c.drop && ch >= 0x20 {
			c.cuts[len(c.cuts)-1].dropped++
		} else {
			b[m] = ch
			m++
		}
		i++
	}
	c.out += int64(m)
	return m
}

// step moves the string's lexing state past ch.
func (c *stringCutter) step(ch byte) {
	if c.hex > 0 && !isHex(ch) {
		c.hex = 0 // corrupt: let the decoder say so
	}
	switch {
	case c.hex > 0:
		c.hex--
	case c.esc:
		c.esc = false
		if ch == 'u' {
			c.hex = 4
		}
	case ch == '\\':
		c.esc = true
	case ch == '"':
		c.in = false
	}
}

func isSpaceOrSeparator(ch byte) bool {
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == ':' || ch == ','
}

func isHex(ch byte) bool {
	return '0' <= ch && ch <= '9' || 'a' <= ch && ch <= 'f' || 'A' <= ch && ch <= 'F'
}

// cutIn reports whether a string was cut within output bytes [start, end).
func (c *stringCutter) cutIn(start, end int64) bool {
	for _, k := range c.cuts {
		if start < k.at && k.at < end {
			return true
		}
	}
	return false
}

// fileOffset is the input offset of output offset off.
func (c *stringCutter) fileOffset(off int64) int64 {
	in := off
	for _, k := range c.cuts {
		if k.at <= off {
			in += k.dropped
		}
	}
	return in
}
