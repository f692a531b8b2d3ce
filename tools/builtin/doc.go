// Package builtin gives the commands svclab's built-in files (package
// clusters: the checkout's clusters/ folder, embedded in the binary), so
// that a binary copied anywhere runs the README's commands:
//
//	sudo svclab create lab --config single-node                 # clusters/single-node.yaml
//	sudo svclab apply -f workloads/nginx.yaml                   # clusters/workloads/nginx.yaml
//	sudo svclab create cluster --config flannel-vxlan ...       # clusters/kind/flannel-vxlan.yaml
//	svclab workshop list                                        # clusters/lessons
//
// Resolve turns an argument into a path: a file or folder that exists is
// always used as it is; otherwise a built-in name (a bare name, or a path
// relative to clusters/, with or without the clusters/ prefix) names the
// built-in file. List lists them (svclab get examples).
//
// The commands read paths (a lesson runs its commands in its folder), so
// Dir puts the files on disk once per content: in a private directory
// (internal/privdir: 0700, parents nobody else may write) named by the
// files' hash, under /run/svclab/builtin for root (beside the labs'
// state; $SVCLAB_STATE_DIR moves both) and under the user's cache
// (~/.cache/svclab/builtin, else /tmp/svclab-builtin-UID for a user
// without a home) for others. Another svclab version's files sit
// beside, under their own hash, so a lesson in progress keeps its files.
package builtin
