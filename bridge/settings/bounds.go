package settings

import (
	"fmt"

	"github.com/msgbridge/msgbridge/contract"
)

// maxEventStreams bounds EVENT_STREAMS: each stream holds a connection and
// two goroutines, about 90 KiB; 10000 of them is no bound on memory.
const maxEventStreams = 10000

// boundSpecs are the bounds on what callers may hold of the bridge, and on
// what it keeps on disk.
func boundSpecs(s *Settings) []setting {
	return []setting{
		{env: contract.EnvEventStreams, def: contract.DefaultEventStreams, usage: "GET /api/events streams open at once (1-10000); beyond, 429 too_many_streams",
			parse: into(&s.EventStreams, countUpTo(maxEventStreams))},
		{env: contract.EnvEventStreamsPerAddress, def: contract.DefaultEventStreamsPerAddress, usage: "of those, how many one client address may hold (1-EVENT_STREAMS)",
			parse: func(v string) (err error) {
				s.EventStreamsPerAddress, err = countUpTo(s.EventStreams)(v)
				return err
			}},
		{env: contract.EnvLogFilesMaxBytes, def: contract.DefaultLogFilesMaxBytes, usage: "most bytes the log files in DATA_DIR/logs hold together (from 1MiB); a day's file is set aside at a sixteenth of it, the oldest files deleted",
			parse: into(&s.LogFilesMaxBytes, parseLogFilesMax)},
		{env: contract.EnvWebhookLocalTargets, def: contract.DefaultWebhookLocalTargets, usage: "on: subscriptions may reach loopback and link-local addresses (a receiver in the bridge's pod); off: refused (target_not_allowed)",
			parse: into(&s.WebhookLocalTargets, parseOnOff)},
		{env: contract.EnvDeliveredRetention, def: formatHours(contract.DefaultDeliveredRetention), usage: "how long delivered events stay in the webhook outbox (from 1s to 8760h)",
			parse: into(&s.DeliveredRetention, parseRetention)},
		{env: contract.EnvEventLogRetention, def: formatHours(contract.DefaultEventLogRetention), usage: "how long the event log keeps an event: how far back GET /api/events resumes (from 1s to 8760h)",
			parse: into(&s.EventLogRetention, parseRetention)},
	}
}

// minLogFilesBytes is the smallest LOG_FILES_MAX_BYTES: below it a day's
// file would be set aside every few hundred lines.
const minLogFilesBytes = 1 << 20

func parseLogFilesMax(v string) (int64, error) {
	n, err := parseSize(v, maxSpoolLimit, "1PiB")
	if err != nil {
		return 0, err
	}
	if n < minLogFilesBytes {
		return 0, fmt.Errorf("must be at least 1MiB, got %q", v)
	}
	return n, nil
}
