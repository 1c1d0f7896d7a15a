package settings

import "github.com/msgbridge/msgbridge/contract"

// maxEventStreams bounds EVENT_STREAMS: each stream holds a connection and
// two goroutines, about 90 KiB; 10000 of them is no bound on memory.
const maxEventStreams = 10000

// boundSpecs are the bounds on what callers may hold of the bridge, and on
// what it keeps on disk.
func boundSpecs(s *Settings) []setting {
	return []setting{
		{env: contract.EnvEventStreams, def: contract.DefaultEventStreams, usage: "GET /api/events streams open at once (1-10000); beyond, 429 too_many_streams",
			parse: into(&s.EventStreams, countWithin(1, maxEventStreams))},
		{env: contract.EnvEventStreamsPerAddress, def: contract.DefaultEventStreamsPerAddress, usage: "of those, how many one client address may hold (1-EVENT_STREAMS)",
			parse: func(v string) (err error) {
				s.EventStreamsPerAddress, err = countWithin(1, s.EventStreams)(v)
				return err
			}},
	}
}
