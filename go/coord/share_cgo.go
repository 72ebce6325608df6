//go:build cgo && !wkcore_purego

package coord

// The library's shared-subscription helpers, called only by this build's
// tests, which check that the Go functions (share.go, the same code in both
// builds) answer as wk_share_topic_build and wk_share_topic_split do.

/*
#cgo CFLAGS: -I${SRCDIR}/../internal/wkabi
#include "wkcore.h"
*/
import "C"

import (
	"unsafe"

	"github.com/wukongim/wkcore/go/internal/status"
)

// The Go bound is the header's (a negative array length, a compile error,
// otherwise).
var (
	_ [C.WK_SHARE_TOPIC_MAX - ShareTopicMax]struct{}
	_ [ShareTopicMax - C.WK_SHARE_TOPIC_MAX]struct{}
	_ [C.WK_SHARE_PREFIX_LEN - len(sharePrefix)]struct{}
	_ [len(sharePrefix) - C.WK_SHARE_PREFIX_LEN]struct{}
	_ [uint64(C.WK_STATUS_COORD_INVALID_SHARE_GROUP) - uint64(codeInvalidShareGroup)]struct{}
	_ [uint64(codeInvalidShareGroup) - uint64(C.WK_STATUS_COORD_INVALID_SHARE_GROUP)]struct{}
	_ [uint64(C.WK_STATUS_COORD_INVALID_TOPIC_FILTER) - uint64(codeInvalidTopicFilter)]struct{}
	_ [uint64(codeInvalidTopicFilter) - uint64(C.WK_STATUS_COORD_INVALID_TOPIC_FILTER)]struct{}
)

// stringPtr points at s's bytes for the call's duration (NULL for "": the
// library reads a NULL of length 0 as the empty string).
func stringPtr(s string) *C.uint8_t {
	if s == "" {
		return nil
	}
	return (*C.uint8_t)(unsafe.Pointer(unsafe.StringData(s)))
}

// shareErr is the Go error of a status of the share calls.
func shareErr(st C.wk_status) error {
	if st == C.WK_STATUS_OK {
		return nil
	}
	return status.Lookup(status.Code(st))
}

// libraryBuildShareTopic is BuildShareTopic by wk_share_topic_build.
func libraryBuildShareTopic(group, filter string) (string, error) {
	buf := make([]byte, ShareTopicMax)
	var n C.size_t
	st := C.wk_share_topic_build(stringPtr(group), C.size_t(len(group)),
		stringPtr(filter), C.size_t(len(filter)),
		(*C.uint8_t)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &n)
	if err := shareErr(st); err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// librarySplitShareTopic is SplitShareTopic by wk_share_topic_split.
func librarySplitShareTopic(topic string) (SharedTopic, error) {
	var out C.wk_share_split
	st := C.wk_share_topic_split(stringPtr(topic), C.size_t(len(topic)), &out)
	if err := shareErr(st); err != nil {
		return SharedTopic{}, err
	}
	return SharedTopic{
		Shared: out.shared != 0,
		Group:  topic[out.group_offset : out.group_offset+out.group_len],
		Filter: topic[out.filter_offset : out.filter_offset+out.filter_len],
	}, nil
}
