package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/svclab/svclab/tools/bench/report"
)

// userHZ is the unit of the times in /proc/PID/stat (USER_HZ, 100 on
// every Linux architecture svclab runs on).
const userHZ = 100

// cpuTimes are a process's CPU times in clock ticks: its own (utime,
// stime) and those of its children it waited for (cutime, cstime).
type cpuTimes struct{ self, children int64 }

// readCPU reads /proc/PID/stat.
func readCPU(pid int) (cpuTimes, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return cpuTimes{}, err
	}
	return parseStat(string(data))
}

// parseStat reads utime, stime, cutime and cstime (fields 14–17) of a
// /proc/PID/stat line. The command name (field 2) is in parentheses and
// may hold spaces and parentheses itself: the fields are counted from the
// last ')'.
func parseStat(line string) (cpuTimes, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return cpuTimes{}, fmt.Errorf("/proc stat %q: no command name", line)
	}
	f := strings.Fields(line[i+1:]) // f[0] is field 3 (state)
	if len(f) < 15 {
		return cpuTimes{}, fmt.Errorf("/proc stat: %d fields after the command name, want at least 15", len(f))
	}
	var v [4]int64
	for k := range v {
		n, err := strconv.ParseInt(f[11+k], 10, 64)
		if err != nil {
			return cpuTimes{}, fmt.Errorf("/proc stat field %d: %w", 14+k, err)
		}
		v[k] = n
	}
	return cpuTimes{self: v[0] + v[1], children: v[2] + v[3]}, nil
}

// since is the CPU used from before to t, in seconds.
func (t cpuTimes) since(before cpuTimes) report.CPU {
	return report.CPU{
		ProxySeconds:    float64(t.self-before.self) / userHZ,
		ChildrenSeconds: float64(t.children-before.children) / userHZ,
	}
}
