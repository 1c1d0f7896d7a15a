package main

import (
	"context"
	"time"

	"github.com/msgbridge/msgbridge/bridge/workingset"
)

// settleBeforeTrim is how long after start-up, and after the session
// connects, the bridge waits before giving back its executable's pages:
// long enough for the burst of work (migrations, the first requests, the
// link's handshake and offline messages) to have passed.
const settleBeforeTrim = 5 * time.Second

// trimWorkingSet gives back the executable pages that start-up and each
// connect touched (package workingset says why that loses nothing).
func (a *app) trimWorkingSet(ctx context.Context) error {
	trim := func() {
		timer := time.NewTimer(settleBeforeTrim)
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		size, err := workingset.Trim()
		if err != nil {
			a.log.Error(err, "give back start-up pages")
			return
		}
		a.log.V(1).Info("gave back start-up pages", "mappedMiB", size>>20)
	}
	trim()
	return a.eachConnect(ctx, trim)
}
