package binding

import "testing"

func TestDirectoryKeepsTheLatestIncarnation(t *testing.T) {
	var d Directory
	if d.Get("a") != nil {
		t.Fatal("empty directory returned a binding")
	}
	first, second := New("a", nil), New("a", nil)
	d.Put(first)
	if d.Get("a") != first {
		t.Fatal("Get after Put: not the binding put in")
	}
	d.Put(second)
	d.Drop(first) // the earlier incarnation stops after its successor started
	if d.Get("a") != second {
		t.Fatal("dropping an earlier incarnation removed its successor")
	}
	d.Drop(second)
	if d.Get("a") != nil {
		t.Fatal("Drop left the binding in")
	}
}
