package openapi_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/bridge/httpapi/openapi"
	"github.com/msgbridge/msgbridge/internal/apitest"
)

// server mounts the handlers as the bridge's router does.
func server(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/openapi.json", openapi.Handler())
	mux.Handle("/docs/", openapi.DocsHandler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// answer is a response read whole.
type answer struct {
	StatusCode int
	Header     http.Header
}

func get(t *testing.T, c *http.Client, url string) (answer, []byte) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{StatusCode: resp.StatusCode, Header: resp.Header}, body
}

func TestHandlerServesTheDocument(t *testing.T) {
	srv := server(t)
	resp, body := get(t, apitest.Client(t), srv.URL+"/openapi.json")
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, openapi.JSON()) {
		t.Errorf("GET /openapi.json: %d, %d bytes; want 200 and the document", resp.StatusCode, len(body))
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/openapi.json", nil)
	post, err := apitest.Client(t).Do(apitest.OffDocument(req))
	if err != nil {
		t.Fatal(err)
	}
	_ = post.Body.Close()
	if post.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /openapi.json: %d, want 405", post.StatusCode)
	}
}

func TestDocsHandlerServesThePage(t *testing.T) {
	srv := server(t)
	resp, page := get(t, apitest.Client(t), srv.URL+"/docs/")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), `<div id="docs">`) {
		t.Fatalf("GET /docs/: %d\n%s", resp.StatusCode, page)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); csp != openapi.DocsCSP || !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	// The page's files: plain client, they are assets, not API operations.
	for _, f := range []struct{ path, mime string }{
		{"/docs/docs.js", "text/javascript"}, {"/docs/swagger-ui-bundle.js", "text/javascript"}, {"/docs/docs.css", "text/css"}, {"/docs/swagger-ui.css", "text/css"},
	} {
		resp, body := get(t, http.DefaultClient, srv.URL+f.path)
		if resp.StatusCode != http.StatusOK || len(body) == 0 || !strings.HasPrefix(resp.Header.Get("Content-Type"), f.mime) {
			t.Errorf("GET %s: %d %q, %d bytes", f.path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
		if resp.Header.Get("Content-Security-Policy") != openapi.DocsCSP {
			t.Errorf("GET %s: no Content-Security-Policy", f.path)
		}
	}
}

// TestDocsPageIsSelfContained: no inline script or style (the policy
// forbids them) and nothing fetched from elsewhere.
func TestDocsPageIsSelfContained(t *testing.T) {
	srv := server(t)
	_, page := get(t, http.DefaultClient, srv.URL+"/docs/")
	for _, tag := range strings.Split(string(page), "<script")[1:] {
		if !strings.HasPrefix(strings.TrimSpace(tag), "src=") || !strings.Contains(tag, "></script>") {
			t.Errorf("an inline script: <script%.80s", tag)
		}
	}
	if strings.Contains(string(page), "<style") || strings.Contains(string(page), "style=") {
		t.Error("inline style in the page")
	}
	for _, path := range []string{"/docs/", "/docs/docs.js", "/docs/docs.css", "/docs/swagger-ui-bundle.js"} {
		_, body := get(t, http.DefaultClient, srv.URL+path)
		for _, host := range []string{"cdn.", "fonts.googleapis", "fonts.gstatic", "unpkg.com", "jsdelivr"} {
			if bytes.Contains(body, []byte(host)) {
				t.Errorf("%s refers to %s", path, host)
			}
		}
	}
}
