package session

// A Context's method set is its file API. The rest of what it offers is
// grouped in views, each a small type over the same Context (the same
// lock, the same state), returned by one method: External for the
// external-change follower (package extwatch), Pending for what the store
// has not seen yet (and its journal), Stats for the counters a status
// file shows, Access for permission checks on a caller's behalf, XAttrs
// for extended attributes. A view is free to get: each is a field of its
// Context.

// External is the external-change protocol of a Context: a follower of
// the store (package extwatch) ingests what another program wrote,
// applies it, recognises memfs's own writes coming back (Echo), and
// announces changes its helper process carries out through the mount
// (announce.go). See external.go.
type External struct{ c *Context }

// Pending is what a Context holds that the store has not seen yet: the
// dirty and removed keys, their values, and their journal.
type Pending struct{ c *Context }

// Stats reports a Context's counters: its size, its last flush, its
// memory, the values found damaged or holding a secret.
type Stats struct{ c *Context }

// Access checks what a caller (a Cred) may read, list or learn of, as
// the mount's permission checks would answer it.
type Access struct{ c *Context }

// XAttrs reads and changes the extended attributes of a Context's nodes.
type XAttrs struct{ c *Context }

// views are a Context's views, made once by NewContext.
type views struct {
	external External
	pending  Pending
	stats    Stats
	access   Access
	xattrs   XAttrs
}

func (c *Context) initViews() {
	c.views = views{external: External{c}, pending: Pending{c}, stats: Stats{c}, access: Access{c}, xattrs: XAttrs{c}}
}

// External returns the session's external-change protocol.
func (c *Context) External() *External { return &c.views.external }

// Pending returns the session's view of what the store has not seen yet.
func (c *Context) Pending() *Pending { return &c.views.pending }

// Stats returns the session's counters.
func (c *Context) Stats() *Stats { return &c.views.stats }

// Access returns the session's permission checks.
func (c *Context) Access() *Access { return &c.views.access }

// XAttrs returns the session's extended attributes.
func (c *Context) XAttrs() *XAttrs { return &c.views.xattrs }
