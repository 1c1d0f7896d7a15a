package metrics

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"
)

// appendGoFamilies adds the Go runtime's families as client_golang's Go
// collector names and describes them, which dashboards expect. The heap
// figures come from one runtime.ReadMemStats per scrape, not from
// runtime/metrics, whose package initialisation alone costs every start
// about a millisecond.
func appendGoFamilies(families []family) []family {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	threads, _ := runtime.ThreadCreateProfile(nil)
	families = append(families,
		gaugeFamily("go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine())),
		gaugeFamily("go_threads", "Number of OS threads created.", float64(threads)),
		family{name: "go_info", help: "Information about the Go environment.", kind: kindGauge,
			samples: []sample{{labels: []label{{"version", runtime.Version()}}, value: 1}}},
		gcDurationFamily(),
		gaugeFamily("go_gc_gogc_percent",
			"Heap size target percentage configured by the user, otherwise 100. This value is set by the GOGC environment variable, and the runtime/debug.SetGCPercent function. Sourced from /gc/gogc:percent.",
			float64(gcPercent())),
		gaugeFamily("go_gc_gomemlimit_bytes",
			"Go runtime memory limit configured by the user, otherwise math.MaxInt64. This value is set by the GOMEMLIMIT environment variable, and the runtime/debug.SetMemoryLimit function. Sourced from /gc/gomemlimit:bytes.",
			float64(debug.SetMemoryLimit(-1))), // a negative limit only reads it
		gaugeFamily("go_sched_gomaxprocs_threads",
			"The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously. Sourced from /sched/gomaxprocs:threads.",
			float64(runtime.GOMAXPROCS(0))),
		gaugeFamily("go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.",
			float64(ms.LastGC)/float64(time.Second)),
	)
	return append(families, memStatsFamilies(&ms)...)
}

// gcDurationFamily is the summary of the garbage collector's pauses: their
// minimum, quartiles and maximum over the recent pauses the runtime keeps,
// and the total over all of them, as the client reports it.
func gcDurationFamily() family {
	stats := debug.GCStats{PauseQuantiles: make([]time.Duration, 5)}
	debug.ReadGCStats(&stats)
	f := family{name: "go_gc_duration_seconds", kind: kindSummary,
		help: "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles."}
	for i, pause := range stats.PauseQuantiles {
		quantile := float64(i) / float64(len(stats.PauseQuantiles)-1)
		f.samples = append(f.samples, sample{labels: []label{{"quantile", formatFloat(quantile)}}, value: pause.Seconds()})
	}
	f.samples = append(f.samples,
		sample{suffix: "_sum", value: stats.PauseTotal.Seconds()},
		sample{suffix: "_count", value: float64(stats.NumGC), whole: true})
	return f
}

// gcPercent is GOGC as the runtime read it at start ("off": -1, unset or
// unreadable: 100). The bridge never changes it with debug.SetGCPercent,
// which is the only way to read it back without runtime/metrics.
func gcPercent() int {
	setting := os.Getenv("GOGC")
	if setting == "off" {
		return -1
	}
	if n, err := strconv.ParseInt(setting, 10, 32); err == nil {
		return int(n)
	}
	return 100
}

// memStatsFamilies are the client's go_memstats_* families, with its
// HELP texts (which name the runtime/metrics each equals).
func memStatsFamilies(ms *runtime.MemStats) []family {
	return []family{
		gaugeFamily("go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.", float64(ms.Alloc)),
		counterFamily("go_memstats_alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.", float64(ms.TotalAlloc)),
		gaugeFamily("go_memstats_buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.", float64(ms.BuckHashSys)),
		counterFamily("go_memstats_frees_total", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.", float64(ms.Frees)),
		gaugeFamily("go_memstats_gc_sys_bytes", "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.", float64(ms.GCSys)),
		gaugeFamily("go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.", float64(ms.HeapAlloc)),
		gaugeFamily("go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", float64(ms.HeapIdle)),
		gaugeFamily("go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes", float64(ms.HeapInuse)),
		gaugeFamily("go_memstats_heap_objects", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.", float64(ms.HeapObjects)),
		gaugeFamily("go_memstats_heap_released_bytes", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.", float64(ms.HeapReleased)),
		gaugeFamily("go_memstats_heap_sys_bytes", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", float64(ms.HeapSys)),
		counterFamily("go_memstats_mallocs_total", "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.", float64(ms.Mallocs)),
		gaugeFamily("go_memstats_mcache_inuse_bytes", "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.", float64(ms.MCacheInuse)),
		gaugeFamily("go_memstats_mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.", float64(ms.MCacheSys)),
		gaugeFamily("go_memstats_mspan_inuse_bytes", "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.", float64(ms.MSpanInuse)),
		gaugeFamily("go_memstats_mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.", float64(ms.MSpanSys)),
		gaugeFamily("go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.", float64(ms.NextGC)),
		gaugeFamily("go_memstats_other_sys_bytes", "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.", float64(ms.OtherSys)),
		gaugeFamily("go_memstats_stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.", float64(ms.StackInuse)),
		gaugeFamily("go_memstats_stack_sys_bytes", "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.", float64(ms.StackSys)),
		gaugeFamily("go_memstats_sys_bytes", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.", float64(ms.Sys)),
	}
}
