// Package labsize is `svclab bench labs`: for every number of nodes asked
// it builds a netns lab of that many nodes (flannel's VXLAN CNI), applies
// a workload of pods-per-node pods on every node behind one Service, and
// measures
//
//   - the bring-up: the lab's create (namespaces, links, the VXLAN mesh,
//     one proxy per node, the cluster DNS) and the workload's apply (every
//     pod's namespace, veth and server), each timed;
//   - the memory of every process of the lab (the sum of their PSS from
//     /proc/PID/smaps_rollup: shared pages counted once across them) and
//     how many processes there are;
//   - one apply that changes one Service (its port), timed until every
//     node's proxy has it in its rules;
//   - the delete of the whole lab.
//
// A load test must stop by itself: the run is bounded in time (a
// deadline), in size (at most MaxNodes nodes and MaxPods pods), and in
// memory — before each lab it refuses a size whose estimate (from the
// previous size's memory per pod) would leave less than the floor
// available, and while a lab is built a watchdog cancels the build (the
// lab rolls itself back) when the machine's available memory falls under
// the floor. What to generate is in objects.go, pure; memory.go reads
// /proc; run.go drives the labs; report.go prints.
package labsize
