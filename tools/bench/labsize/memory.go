package labsize

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/svclab/svclab/labs/agents/process"
	"github.com/svclab/svclab/labs/netns/network"
)

// Footprint is what a lab's processes hold.
type Footprint struct {
	// Processes is how many processes run in the lab's namespaces.
	Processes int `json:"processes"`
	// PSSBytes is the sum of their proportional set sizes: a page shared
	// by k processes counts 1/k in each, so the sum counts it once.
	PSSBytes int64 `json:"pssBytes"`
}

// labFootprint finds every process in the lab's network namespaces and
// sums their PSS. A process that ends while it is read is left out.
func labFootprint(lab string) (Footprint, error) {
	names, err := network.Namespaces(lab)
	if err != nil {
		return Footprint{}, err
	}
	var f Footprint
	for _, pid := range process.InNamespaces(names) {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
		if err != nil {
			continue
		}
		pss, ok := pssOf(data)
		if !ok {
			continue
		}
		f.Processes++
		f.PSSBytes += pss
	}
	return f, nil
}

// pssOf reads the Pss: line of a smaps_rollup file, in bytes.
func pssOf(smapsRollup []byte) (int64, bool) {
	return kibField(smapsRollup, "Pss:")
}

// memAvailable is the kernel's estimate of the memory available to new
// work without swapping (MemAvailable in /proc/meminfo), in bytes.
func memAvailable() (int64, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	v, ok := kibField(data, "MemAvailable:")
	if !ok {
		return 0, fmt.Errorf("/proc/meminfo: no MemAvailable line")
	}
	return v, nil
}

// kibField reads the value of the first line starting with key, given in
// kB as /proc shows it, in bytes.
func kibField(data []byte, key string) (int64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), key)
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, false
		}
		kib, err := strconv.ParseInt(fields[0], 10, 64)
		return kib * 1024, err == nil
	}
	return 0, false
}
