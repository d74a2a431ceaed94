package xu

import "testing"

func TestPrivateEndpoint(t *testing.T) {
	for u, want := range map[string]bool{
		"https://10.20.0.7/x": true, "http://127.0.0.1:8080/": true, "http://[::1]/": true, "http://[fe80::1]/": true,
		"https://payroll.corp/x": true, "https://gw.internal/x": true, "http://printer.local/": true, "http://intranet/": true,
		"https://api.example.com/x": false, "https://8.8.8.8/": false, "agent://translator-zh-en": false, "": false,
	} {
		if got := privateEndpoint(u); got != want {
			t.Errorf("privateEndpoint(%q) = %v, want %v", u, got, want)
		}
	}
}
