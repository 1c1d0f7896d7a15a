package process

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const hardenAPIKey = "api-key-0123456789abcdef" // validEnv's

// tmpfsDataDir mounts a tmpfs of size bytes as a DATA_DIR, unmounted at
// cleanup. Outside CI a machine that cannot mount skips the test.
func tmpfsDataDir(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount a tmpfs for the full-disk case: %v %s", err, out)
		}
		t.Skipf("cannot mount a tmpfs (needs root): %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return filepath.Join(dir, "data")
}

// sendDocument posts one document of size bytes with the key in the header.
func sendDocument(t *testing.T, base string, size int) (int, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("number", "4915100000002")
	_ = mw.WriteField("type[]", "document")
	fw, _ := mw.CreateFormFile("file[]", "big.bin")
	_, _ = fw.Write(bytes.Repeat([]byte{7}, size))
	_ = mw.Close()
	return postSend(t, base, mw.FormDataContentType(), &body)
}

// postSend writes the request on a raw connection while it reads the
// answer: the bridge answers a refused upload before its end and closes,
// and an HTTP client still writing would see only the reset.
func postSend(t *testing.T, base, contentType string, body *bytes.Buffer) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	go func() {
		fmt.Fprintf(c, "POST /send HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nX-Api-Key: %s\r\nContent-Length: %d\r\n\r\n",
			contentType, hardenAPIKey, body.Len())
		_, _ = c.Write(body.Bytes())
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

func sendTextTo(t *testing.T, base string) (int, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("number", "4915100000002")
	_ = mw.WriteField("type[]", "text")
	_ = mw.WriteField("text[]", "still works")
	_ = mw.Close()
	return postSend(t, base, mw.FormDataContentType(), &body)
}

// Items 1 and 6 through the process: a DATA_DIR volume that fills while a
// valid attachment is stored answers 507 (not 400), and the default spool
// bound (a quarter of the free space) refuses an attachment that would eat
// the volume, with 507, while text sends go on.
func TestFullDiskAnswers507(t *testing.T) {
	for name, c := range map[string]struct {
		env  []string
		size int
	}{
		// The bound is the whole volume (a larger one is refused at
		// start-up), which the databases share: the disk fills first.
		"disk full while writing": {env: []string{"SPOOL_MAX_BYTES=24MiB", "MAX_FILE_SIZE=24MiB"}, size: 24<<20 - 4<<10},
		// The default bound refuses before the disk is full.
		"default spool bound": {env: []string{"MAX_FILE_SIZE=40MB"}, size: 12 << 20},
	} {
		t.Run(name, func(t *testing.T) {
			dataDir := tmpfsDataDir(t, "24m")
			p := startBridge(t, bridgeBin, append(validEnv(dataDir), c.env...))
			base := "http://" + p.addr
			status, raw := sendDocument(t, base, c.size)
			if status != http.StatusInsufficientStorage || !strings.Contains(raw, `"insufficient_storage"`) {
				t.Errorf("attachment on a full volume: %d %s", status, raw)
			}
			if entries, _ := os.ReadDir(filepath.Join(dataDir, "spool")); len(entries) != 0 {
				t.Errorf("%d files left in the spool", len(entries))
			}
			if status, raw := sendTextTo(t, base); status != http.StatusAccepted {
				t.Errorf("text send after the refused attachment: %d %s", status, raw)
			}
		})
	}
}

// trickle opens a keyless upload to addr: the head of POST /send with a
// file part first, then one byte of the file every interval until stop.
// It reports when the server ended the connection.
// With inField the trickled bytes are the value of a text field instead:
// the request is not refused at its first file part, and holds an upload
// slot until its deadlines.
func trickle(addr string, inField bool, stop <-chan struct{}, interval time.Duration, closed func()) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	head := "--B\r\nContent-Disposition: form-data; name=\"number\"\r\n\r\n4915100000002\r\n" +
		"--B\r\nContent-Disposition: form-data; name=\"type[]\"\r\n\r\ndocument\r\n" +
		"--B\r\nContent-Disposition: form-data; name=\"file[]\"; filename=\"a.bin\"\r\n\r\n"
	if inField {
		head = "--B\r\nContent-Disposition: form-data; name=\"text[]\"\r\n\r\n"
	}
	fmt.Fprintf(c, "POST /send HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: %d\r\n\r\n%s",
		len(head)+10<<20, head)
	go func() { // the server's answer, or its close
		_, _ = io.Copy(io.Discard, c)
		closed()
	}()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	chunk := bytes.Repeat([]byte{'x'}, 64)
	for {
		select {
		case <-stop:
			return nil
		case <-ticker.C:
			if _, err := c.Write(chunk); err != nil {
				return nil // closed by the server
			}
		}
	}
}

// openSockets counts the process's open sockets.
func openSockets(t *testing.T, pid int) int {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Skip("no /proc:", err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && strings.HasPrefix(target, "socket:") {
			n++
		}
	}
	return n
}

func dirSize(dir string) int64 {
	var total int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			total += info.Size()
		}
	}
	return total
}

// Items 1 and 2 through the process: keyless clients trickling uploads
// hold neither connections nor spool space. TRICKLE_CLIENTS sets how many
// (300 for the figures).
func TestTricklingKeylessUploads(t *testing.T) {
	for name, inField := range map[string]bool{"file first": false, "field trickled": true} {
		t.Run(name, func(t *testing.T) { trickleMany(t, inField) })
	}
}

func trickleMany(t *testing.T, inField bool) {
	clients := 100
	if n, err := fmt.Sscan(os.Getenv("TRICKLE_CLIENTS"), &clients); n != 1 || err != nil {
		clients = 100
	}
	dataDir := t.TempDir()
	p := startBridge(t, bridgeBin, validEnv(dataDir))
	before := openSockets(t, p.cmd.Process.Pid)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	closedByServer := 0
	for range clients {
		wg.Go(func() {
			_ = trickle(p.addr, inField, stop, 200*time.Millisecond, func() { mu.Lock(); closedByServer++; mu.Unlock() })
		})
	}
	time.Sleep(5 * time.Second)
	held := openSockets(t, p.cmd.Process.Pid) - before
	spooled := dirSize(filepath.Join(dataDir, "spool"))
	mu.Lock()
	closed := closedByServer
	mu.Unlock()
	close(stop)
	wg.Wait()
	t.Logf("%d trickling keyless clients after 5 s: %d sockets held by the bridge, %d bytes spooled, %d closed by the bridge",
		clients, held, spooled, closed)
	if spooled != 0 {
		t.Errorf("%d bytes spooled for keyless clients", spooled)
	}
	if held > 32 { // the upload cap
		t.Errorf("%d connections held, above the cap of 32 uploads", held)
	}
}
