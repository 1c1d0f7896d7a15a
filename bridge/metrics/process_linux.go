package metrics

import (
	"bufio"
	"bytes"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
)

// userHZ is the kernel's clock tick for the times in /proc (USER_HZ),
// 100 on every Linux platform Go supports; procfs assumes it too.
const userHZ = 100

// appendProcessFamilies adds the process's families as client_golang's
// process collector names and describes them, read from /proc. A file
// that cannot be read leaves its families out.
func appendProcessFamilies(families []family) []family {
	if stat, err := readProcStat(); err == nil {
		families = append(families,
			counterFamily("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", stat.cpuSeconds),
			gaugeFamily("process_virtual_memory_bytes", "Virtual memory size in bytes.", stat.virtualBytes),
			gaugeFamily("process_resident_memory_bytes", "Resident memory size in bytes.", stat.residentBytes))
		if boot, err := bootTime(); err == nil {
			families = append(families, gaugeFamily("process_start_time_seconds",
				"Start time of the process since unix epoch in seconds.", boot+stat.startSinceBoot))
		}
	}
	if entries, err := os.ReadDir("/proc/self/fd"); err == nil {
		families = append(families, gaugeFamily("process_open_fds", "Number of open file descriptors.", float64(len(entries))))
	}
	if limits, err := os.ReadFile("/proc/self/limits"); err == nil {
		if v, ok := softLimit(limits, "Max open files"); ok {
			families = append(families, gaugeFamily("process_max_fds", "Maximum number of open file descriptors.", v))
		}
		if v, ok := softLimit(limits, "Max address space"); ok {
			families = append(families, gaugeFamily("process_virtual_memory_max_bytes",
				"Maximum amount of virtual memory available in bytes.", v))
		}
	}
	if in, out, err := networkBytes(); err == nil {
		families = append(families,
			counterFamily("process_network_receive_bytes_total", "Number of bytes received by the process over the network.", in),
			counterFamily("process_network_transmit_bytes_total", "Number of bytes sent by the process over the network.", out))
	}
	return families
}

// procStat is what the process families need of /proc/self/stat.
type procStat struct {
	cpuSeconds, startSinceBoot, virtualBytes, residentBytes float64
}

func readProcStat() (procStat, error) {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(data, os.Getpagesize())
}

// parseProcStat reads proc(5)'s fields utime (14), stime (15), starttime
// (22), vsize (23) and rss (24, in pages). The command name (2) is in
// parentheses and may hold spaces or parentheses itself, so the fields
// are counted from the last ')'.
func parseProcStat(data []byte, pageSize int) (procStat, error) {
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return procStat{}, errors.New("/proc/self/stat: no command name")
	}
	fields := strings.Fields(string(data[end+1:])) // fields[0] is field 3, the state
	const first = 3
	var err error
	field := func(n int) float64 {
		if n-first >= len(fields) {
			err = errors.New("/proc/self/stat: too few fields")
			return 0
		}
		v, parseErr := strconv.ParseUint(fields[n-first], 10, 64)
		if parseErr != nil {
			err = parseErr
		}
		return float64(v)
	}
	s := procStat{
		cpuSeconds:     (field(14) + field(15)) / userHZ,
		startSinceBoot: field(22) / userHZ,
		virtualBytes:   field(23),
		residentBytes:  field(24) * float64(pageSize),
	}
	return s, err
}

// bootTime is the system's boot time in seconds since the epoch, the btime
// line of /proc/stat.
func bootTime() (float64, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), "btime "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	if err := lines.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("/proc/stat: no btime")
}

// softLimit is the soft limit of the named row of /proc/self/limits;
// "unlimited" is the largest uint64, as the client reports it.
func softLimit(limits []byte, name string) (float64, bool) {
	for line := range strings.Lines(string(limits)) {
		rest, ok := strings.CutPrefix(line, name)
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return 0, false
		}
		if fields[0] == "unlimited" {
			return math.MaxUint64, true
		}
		v, err := strconv.ParseUint(fields[0], 10, 64)
		return float64(v), err == nil
	}
	return 0, false
}

// networkBytes are the InOctets and OutOctets of /proc/self/net/netstat's
// IpExt lines: a header line of names, then a line of values. Missing
// names count 0, as the client counts them.
func networkBytes() (in, out float64, err error) {
	data, err := os.ReadFile("/proc/self/net/netstat")
	if err != nil {
		return 0, 0, err
	}
	var names []string
	for line := range strings.Lines(string(data)) {
		rest, ok := strings.CutPrefix(line, "IpExt:")
		if !ok {
			continue
		}
		if names == nil {
			names = strings.Fields(rest)
			continue
		}
		for i, v := range strings.Fields(rest) {
			if i >= len(names) {
				break
			}
			switch names[i] {
			case "InOctets":
				in, _ = strconv.ParseFloat(v, 64)
			case "OutOctets":
				out, _ = strconv.ParseFloat(v, 64)
			}
		}
		break
	}
	return in, out, nil
}
