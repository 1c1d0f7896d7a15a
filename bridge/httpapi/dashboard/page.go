package dashboard

import (
	"html/template"
	"io/fs"
	"net/http"
	"sync"
)

// pages are parsed by the first page served, not at start-up (see router).
var pages = sync.OnceValue(func() *template.Template { return template.Must(template.ParseFS(web, "web/*.html")) })

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}

// page is the sign-in form, or the dashboard for a signed-in browser.
// A template's error can only come from writing to a client that left.
func (d *Dashboard) page(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	ws, ok := d.sessions.get(r)
	if !ok {
		_ = pages().ExecuteTemplate(w, "signin.html", map[string]any{"Error": signInErrors[r.URL.Query().Get("error")]})
		return nil
	}
	_ = pages().ExecuteTemplate(w, "index.html", map[string]any{
		"CSRF": ws.csrf,
		"TOTP": len(d.opts.TOTPKey) > 0,
	})
	return nil
}
