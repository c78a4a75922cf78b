package config

// File is the whole configuration file.
//
// A File is a plain value: it is not safe for concurrent mutation, and the
// manager that owns it serialises edits. Get and Clone copy, so what they
// return can be changed without touching the File.
type File struct {
	// Servers are the entries of "servers" in file order, which is the
	// startup order. Names are unique in a File from [Parse]; keep them so
	// (Put does), or Marshal refuses the File.
	Servers []Server

	unknown []member // top-level fields this version does not know
}

// Get returns a copy of the server called name.
func (f *File) Get(name string) (Server, bool) {
	if f == nil {
		return Server{}, false
	}
	if i := f.index(name); i >= 0 {
		return f.Servers[i].Clone(), true
	}
	return Server{}, false
}

// Put stores a copy of s: it replaces the server of the same name where it
// stands, so an edit does not change the startup order, or appends s.
func (f *File) Put(s Server) {
	s = s.Clone()
	if i := f.index(s.Name); i >= 0 {
		f.Servers[i] = s
		return
	}
	f.Servers = append(f.Servers, s)
}

// Remove deletes the server called name and reports whether it was there.
func (f *File) Remove(name string) bool {
	i := f.index(name)
	if i < 0 {
		return false
	}
	f.Servers = append(f.Servers[:i:i], f.Servers[i+1:]...)
	return true
}

// Clone returns a deep copy of f.
func (f *File) Clone() *File {
	if f == nil {
		return nil
	}
	c := &File{unknown: cloneMembers(f.unknown)}
	if f.Servers != nil {
		c.Servers = make([]Server, len(f.Servers))
		for i, s := range f.Servers {
			c.Servers[i] = s.Clone()
		}
	}
	return c
}

func (f *File) index(name string) int {
	for i, s := range f.Servers {
		if s.Name == name {
			return i
		}
	}
	return -1
}
