package labsize

import "fmt"

// Result is what a run measured, one Size per number of nodes asked.
type Result struct {
	PodsPerNode int `json:"podsPerNode"`
	// StateFilesystem is the filesystem of the labs' state directory
	// (tmpfs, ext4, …): compare runs on the same one (stateFilesystem).
	StateFilesystem string `json:"stateFilesystem"`
	Sizes           []Size `json:"sizes"`
	// Stopped says why the run stopped before measuring every size (its
	// deadline, an interrupt, the memory floor); "" when it did not.
	Stopped   string `json:"stopped,omitempty"`
	ElapsedMs int64  `json:"elapsedMs"`
}

// Size is one lab measured: its bring-up, its footprint, one change and
// its delete. Durations are in milliseconds; zero when not reached.
type Size struct {
	Nodes int `json:"nodes"`
	Pods  int `json:"pods"`
	// CreateMs is the lab's create: namespaces, links, the VXLAN mesh,
	// the proxies' first sync and the cluster DNS pod.
	CreateMs int64 `json:"createMs"`
	// PodsMs is the workload's apply: every pod up and its server
	// listening, the proxies synced.
	PodsMs int64 `json:"podsMs"`
	// PodsStartMs is the part of it that started the pods (attached to
	// their nodes, their servers bound), PodsProxiesMs the part that
	// waited for every node's proxy to have their endpoints.
	PodsStartMs   int64 `json:"podsStartMs"`
	PodsProxiesMs int64 `json:"podsProxiesMs"`
	// BringUpMs is CreateMs + PodsMs.
	BringUpMs int64 `json:"bringUpMs"`
	// PerPodMs is PodsMs / Pods.
	PerPodMs float64 `json:"perPodMs"`
	// Footprint is the lab's processes once every pod is up.
	Footprint Footprint `json:"footprint"`
	// ChangeServiceMs is one apply that changes the workload's Service (its
	// port), until every node's proxy has it.
	ChangeServiceMs int64 `json:"changeServiceMs"`
	// DeleteMs is the delete of the whole lab.
	DeleteMs int64 `json:"deleteMs"`
	// Skipped says why the size was not measured (the memory estimate,
	// an earlier stop); Error what failed while it was.
	Skipped string `json:"skipped,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Failed is an error when a size failed or the run stopped before the
// last one.
func Failed(res *Result) error {
	failed := 0
	for _, s := range res.Sizes {
		if s.Error != "" {
			failed++
		}
	}
	switch {
	case failed > 0:
		return fmt.Errorf("bench labs: %d of %d sizes failed (see above)", failed, len(res.Sizes))
	case res.Stopped != "":
		return fmt.Errorf("bench labs: stopped early: %s", res.Stopped)
	}
	return nil
}
