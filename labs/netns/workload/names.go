package workload

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// safeAlphabet is the alphabet Kubernetes uses for generated name suffixes
// (k8s.io/apimachinery/pkg/util/rand): no vowels, no look-alike characters.
const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// safeEncode maps every byte of s to the safe alphabet, as rand.SafeEncodeString.
func safeEncode(s string) string {
	r := []byte(s)
	for i, b := range r {
		r[i] = safeAlphabet[int(b)%len(safeAlphabet)]
	}
	return string(r)
}

// hashOf is the pod-template-hash way of naming things: FNV-32a of the
// object's JSON, printed in decimal and safe-encoded.
func hashOf(v any) string {
	h := fnv.New32a()
	data, _ := json.Marshal(v)
	h.Write(data)
	return safeEncode(fmt.Sprint(h.Sum32()))
}

// objectUID is the UID the lab gives an object (the API server makes a
// random UUID; a lab derives one from the object's kind, namespace and
// name, in UUID form, so that it is repeatable). Owner references carry it.
func objectUID(kind string, meta metav1.ObjectMeta) types.UID {
	sum := sha1.Sum([]byte(kind + "/" + meta.Namespace + "/" + meta.Name))
	h := hex.EncodeToString(sum[:16])
	return types.UID(h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32])
}

// randomSuffix is the 5-character suffix the ReplicaSet controller gives
// pods, from c.Rand when set (tests that compare whole states), else the
// process's random source.
func (c Cluster) randomSuffix() string {
	intN := rand.IntN
	if c.Rand != nil {
		intN = c.Rand.IntN
	}
	b := make([]byte, 5)
	for i := range b {
		b[i] = safeAlphabet[intN(len(safeAlphabet))]
	}
	return string(b)
}
