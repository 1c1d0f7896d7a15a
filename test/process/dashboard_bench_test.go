package process

import (
	"testing"

	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// BenchmarkDashboardQRRotation is the time from the bridge receiving a new
// QR code from whatsmeow to the page showing it, in headless Chromium; one
// iteration is one rotation (the first comes after 60 s, later ones every
// 20 s), so run it with -benchtime=3x. event-ms, the server-sent event
// reaching the page, is the baseline: shown-ms adds rendering the PNG,
// fetching and drawing it.
func BenchmarkDashboardQRRotation(b *testing.B) {
	ctx := browser(b)
	sim := wasim.Start(b)
	p := startBridge(b, simBridgeBin, simEnv(sim, b.TempDir()))
	signInBrowser(b, ctx, "http://"+p.addr)
	showQR(b, ctx, "")
	src := eval[string](b, ctx, qrShown)
	var eventSum, shownSum, shownMax float64
	b.ResetTimer()
	for range b.N {
		src = waitRotation(b, ctx, src)
		event, shown := qrTiming(b, ctx)
		eventSum, shownSum, shownMax = eventSum+event, shownSum+shown, max(shownMax, shown)
	}
	b.StopTimer()
	b.ReportMetric(eventSum/float64(b.N), "event-ms")
	b.ReportMetric(shownSum/float64(b.N), "shown-ms")
	b.ReportMetric(shownMax, "max-shown-ms")
	b.ReportMetric(0, "ns/op") // a rotation's period is whatsmeow's, not ours
}
