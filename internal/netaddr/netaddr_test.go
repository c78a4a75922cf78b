package netaddr

import "testing"

func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "localhost.": true, "localhost:8080": true,
		"127.0.0.1": true, "127.1.2.3:80": true, "::1": true, "[::1]": true, "[::1]:8080": true,
		"::ffff:127.0.0.1": true,
		"":                 false, "example.com": false, "localhost.example.com": false, "10.0.0.1": false,
		"0.0.0.0": false, "[::]:80": false, "169.254.1.1": false, "127.0.0.1.nip.io": false,
	} {
		if got := Loopback(host); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", host, got, want)
		}
	}
}
