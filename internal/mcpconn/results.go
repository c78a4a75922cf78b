package mcpconn

// Scrub is text with every secret of this connection replaced, for
// server data the runtime passes on in fields of its own (structured
// results, resource link details).
func (c *Conn) Scrub(text string) string { return c.scrub.String(text) }

// ScrubError is Scrub for a text that quotes server data in an error the
// runtime writes (a schema or validation error): scrubbed, then bounded
// like every error that leaves a connection.
func (c *Conn) ScrubError(text string) string { return c.scrub.ErrorString(text) }
