package process

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// mediaBench is a linked bridge process with webhooks on and a few
// contacts that write to it.
type mediaBench struct {
	b        *testing.B
	sim      *wasim.Simulator
	hooks    *hookReceiver
	p        *bridgeProcess
	dataDir  string
	contacts []*wasim.User
}

func newMediaBench(b *testing.B, contacts int) *mediaBench {
	m := &mediaBench{b: b, sim: wasim.Start(b), hooks: newHookReceiver(b)}
	m.dataDir = linkedDataDir(b, m.sim)
	m.p = startBridge(b, simBridgeBin, append(simEnv(m.sim, m.dataDir), m.hooks.env()...))
	waitConnected(b, m.p)
	for i := range contacts {
		m.contacts = append(m.contacts, m.sim.Contact(fmt.Sprintf("49151000001%02d", i), "Contact "+strconv.Itoa(i)))
	}
	time.Sleep(2 * time.Second) // settle after the login's prekey upload
	return m
}

// upserts counts the message.upsert events delivered.
func (m *mediaBench) upserts() int {
	n := 0
	for _, e := range m.hooks.all() {
		if e.str("event") == "message.upsert" {
			n++
		}
	}
	return n
}

// send has every contact send perContact messages made by msg, at once,
// and returns when they were all sent.
func (m *mediaBench) send(perContact int, msg func(c *wasim.User, i int) error) {
	var wg sync.WaitGroup
	for _, c := range m.contacts {
		wg.Go(func() {
			for i := range perContact {
				if err := msg(c, i); err != nil {
					m.b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// storedMedia is how many media files are sealed in place (none under way).
func (m *mediaBench) storedMedia() (done, underWay int) {
	entries, _ := os.ReadDir(filepath.Join(m.dataDir, "media"))
	for _, e := range entries {
		if filepath.Ext(e.Name()) == "" {
			done++
		} else {
			underWay++
		}
	}
	return done, underWay
}

// resetPeak starts the process's high-water mark of resident memory again
// from its current size (Linux: clear_refs 5).
func resetPeak(b *testing.B, pid int) {
	if err := os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the peak RSS: %v", err)
	}
}

// BenchmarkIncomingMediaMemory: the bridge's peak RSS growth while 4
// contacts each send a 50 MB document, until all four are downloaded and
// sealed; baseline, the same 4 contacts each sending a small text.
//
//	go test -run=NONE -bench=IncomingMediaMemory -benchtime=1x ./test/process
func BenchmarkIncomingMediaMemory(b *testing.B) {
	const contacts, size = 4, 50_000_000
	m := newMediaBench(b, contacts)
	pid := m.p.cmd.Process.Pid
	doc := make([]byte, size)
	_, _ = rand.Read(doc)
	ctx := context.Background()
	var textGrowth, mediaGrowth int
	for range b.N {
		resetPeak(b, pid)
		before, want := rssKB(b, pid), m.upserts()+contacts
		m.send(1, func(c *wasim.User, _ int) error { _, err := c.SendText(ctx, accountJID, "hello"); return err })
		testutil.Eventually(b, time.Minute, func() bool { return m.upserts() >= want }, "texts not delivered")
		textGrowth += peakRSSKB(b, pid) - before

		resetPeak(b, pid)
		before, want = rssKB(b, pid), m.upserts()+contacts
		stored, _ := m.storedMedia()
		m.send(1, func(c *wasim.User, _ int) error {
			_, err := c.SendMedia(ctx, accountJID, wasim.Attachment{Kind: "document", Data: doc, MimeType: "application/pdf", FileName: "big.pdf"})
			return err
		})
		testutil.Eventually(b, 5*time.Minute, func() bool {
			done, underWay := m.storedMedia()
			return m.upserts() >= want && done == stored+contacts && underWay == 0
		}, "documents not downloaded")
		mediaGrowth += peakRSSKB(b, pid) - before
	}
	b.ReportMetric(float64(textGrowth)/1024/float64(b.N), "MB-growth-texts")
	b.ReportMetric(float64(mediaGrowth)/1024/float64(b.N), "MB-growth-4x50MB")
}

// BenchmarkIncomingMessages: messages per second from 4 simulated
// contacts to the webhook receiver, as 10 KB images (stored, with their
// media registered, then downloaded in the background) and, the baseline,
// as texts.
//
//	go test -run=NONE -bench=IncomingMessages -benchtime=200x ./test/process
func BenchmarkIncomingMessages(b *testing.B) {
	const contacts = 4
	m := newMediaBench(b, contacts)
	ctx := context.Background()
	img := make([]byte, 10<<10)
	_, _ = rand.Read(img)
	perContact := max(b.N/contacts, 1)
	run := func(msg func(c *wasim.User, i int) error) float64 {
		want := m.upserts() + perContact*contacts
		start := time.Now()
		m.send(perContact, msg)
		testutil.Eventually(b, 5*time.Minute, func() bool { return m.upserts() >= want }, "messages not delivered")
		return float64(perContact*contacts) / time.Since(start).Seconds()
	}
	texts := run(func(c *wasim.User, i int) error {
		_, err := c.SendText(ctx, accountJID, "text "+strconv.Itoa(i))
		return err
	})
	stored, _ := m.storedMedia()
	start := time.Now()
	images := run(func(c *wasim.User, _ int) error {
		_, err := c.SendMedia(ctx, accountJID, wasim.Attachment{Kind: "image", Data: img, MimeType: "image/jpeg"})
		return err
	})
	testutil.Eventually(b, 5*time.Minute, func() bool {
		done, _ := m.storedMedia()
		return done >= stored+perContact*contacts
	}, "images not downloaded")
	downloaded := float64(perContact*contacts) / time.Since(start).Seconds()
	b.ReportMetric(texts, "texts/s")
	b.ReportMetric(images, "images/s")
	b.ReportMetric(downloaded, "images-downloaded/s")
}
