// Package web is the search site for people, a door over the engine
// (Site): the home and results page, the about page, an entry's page and
// the error pages, their html/template templates, the view types they
// render, and the stylesheet, script and icon they load, all embedded in
// the binary (no build step, no CDN, no external font). It turns the
// engine's answers and records into views. Catalog text is untrusted:
// templates escape it, links are only ever http(s) (door.SafeURL) and outbound
// links carry rel="nofollow noopener". It imports the engine,
// searchapi/door, federation and normalize, never another door.
package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"sync"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// ContentSecurityPolicy is the policy every page is served with: scripts,
// styles and images only from this origin, no inline script or style, no
// plugins, no framing, forms only to this origin.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// pages are the templates a Renderer knows, each rendered inside layout.html.
var pages = []string{"search", "detail", "about", "error"}

// Renderer renders the pages. Create it with New; it is safe for
// concurrent use.
type Renderer struct {
	pages map[string]*template.Template
}

// New parses the embedded templates.
func New() (*Renderer, error) {
	funcs := template.FuncMap{
		"plural": func(n int, one, many string) string {
			if n == 1 {
				return one
			}
			return many
		},
		"join": strings.Join,
	}
	r := &Renderer{pages: map[string]*template.Template{}}
	for _, p := range pages {
		t, err := template.New(p).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html", "templates/"+p+".html")
		if err != nil {
			return nil, fmt.Errorf("parse %s page: %w", p, err)
		}
		r.pages[p] = t
	}
	return r, nil
}

// bufPool holds page buffers: a results page is some 40 KiB, grown anew
// for every request without it.
var bufPool = sync.Pool{New: func() any { return bytes.NewBuffer(make([]byte, 0, 64<<10)) }}

// maxPooledBuffer keeps an unusually large page's buffer out of the pool.
const maxPooledBuffer = 1 << 20

// Render writes page name with data and the given status, with the
// security headers every page carries. The page is rendered into memory
// first, so a template failure becomes an error, not half a page.
func (r *Renderer) Render(w http.ResponseWriter, status int, name string, data any) error {
	t, ok := r.pages[name]
	if !ok {
		return fmt.Errorf("no page %q", name)
	}
	buf := bufPool.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			buf.Reset()
			bufPool.Put(buf)
		}
	}()
	if err := t.ExecuteTemplate(buf, "layout", data); err != nil {
		return fmt.Errorf("render %s page: %w", name, err)
	}
	h := w.Header()
	SecurityHeaders(h)
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}

// SecurityHeaders sets the headers every page and asset carries.
func SecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
}

// Static serves the embedded assets (style.css, app.js, icon.svg) under
// the prefix it is mounted at, which it strips. They are cached for an hour.
func Static(prefix string) http.Handler {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err) // the embed directive guarantees the directory
	}
	files := http.StripPrefix(prefix, http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		SecurityHeaders(w.Header())
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
}
