package coord

import (
	"errors"
	"strings"
	"testing"
	"unsafe"
)

// The shared-subscription statuses are in testdata/coord/statuses.json;
// TestStatusesMatchTestdata checks every entry against its Go sentinel.
func init() {
	statusSentinels["WK_STATUS_COORD_INVALID_SHARE_GROUP"] = ErrInvalidShareGroup
	statusSentinels["WK_STATUS_COORD_INVALID_TOPIC_FILTER"] = ErrInvalidTopicFilter
}

// shareCase is one input of the table both builds check (and the cgo build
// also against the library).
type shareCase struct {
	topic string
	want  error // nil: valid
}

var shareTopics = []shareCase{
	{"$share/workers/uplink/+/data", nil},
	{"$share/g/#", nil},
	{"$share/g/+", nil},
	{"$share/g/a/b/", nil},
	{"$share/g/$SYS/#", nil},
	{"$share/日本/a", nil},
	{"a/b", nil},
	{"#", nil},
	{"+", nil},
	{"/", nil},
	{"a//b", nil},
	{"$SYS/x", nil},
	{"$sharex/g/f", nil},
	{"a/$share/g", nil},
	{"$shar", nil},
	{"$share", ErrInvalidShareGroup},
	{"$share/", ErrInvalidShareGroup},
	{"$share//f", ErrInvalidShareGroup},
	{"$share//", ErrInvalidShareGroup},
	{"$share/g+/f", ErrInvalidShareGroup},
	{"$share/#/f", ErrInvalidShareGroup},
	{"$share/g\x00/f", ErrInvalidShareGroup},
	{"$share/g", ErrInvalidTopicFilter},
	{"$share/g/", ErrInvalidTopicFilter},
	{"$share/g/a/#/b", ErrInvalidTopicFilter},
	{"$share/g/a+", ErrInvalidTopicFilter},
	{"$share/g/a/b#", ErrInvalidTopicFilter},
	{"$share/g/a\x00", ErrInvalidTopicFilter},
	{"$share/g/$share/h/f", ErrInvalidTopicFilter},
	{"$share/g/$share", ErrInvalidTopicFilter},
	{"$share/\xff/f", ErrInvalidTopicFilter},
	{"", ErrInvalidTopicFilter},
	{"a/#/b", ErrInvalidTopicFilter},
	{"a+/b", ErrInvalidTopicFilter},
	{"##", ErrInvalidTopicFilter},
	{"a/\xff", ErrInvalidTopicFilter},
	{strings.Repeat("p", ShareTopicMax), nil},
	{strings.Repeat("p", ShareTopicMax+1), ErrInvalidTopicFilter},
}

// buildCase is one (group, filter) pair and the error it must give.
type buildCase struct {
	group, filter string
	want          error
}

var shareBuilds = []buildCase{
	{"workers", "uplink/+/data", nil},
	{"g", "#", nil},
	{"g-1.x", "$SYS/#", nil},
	{"日本", "a/b/", nil},
	{"g", strings.Repeat("f", ShareTopicMax-len(sharePrefix)-2), nil},
	{"g", strings.Repeat("f", ShareTopicMax-len(sharePrefix)-1), ErrInvalidTopicFilter},
	{"", "f", ErrInvalidShareGroup},
	{"a/b", "f", ErrInvalidShareGroup},
	{"a+", "f", ErrInvalidShareGroup},
	{"#", "f", ErrInvalidShareGroup},
	{"g\x00", "f", ErrInvalidShareGroup},
	{"\xff", "f", ErrInvalidShareGroup},
	{"", "", ErrInvalidShareGroup},
	{"a/b", "\xff", ErrInvalidShareGroup},
	{"g", "", ErrInvalidTopicFilter},
	{"g", "a/#/b", ErrInvalidTopicFilter},
	{"g", "a+", ErrInvalidTopicFilter},
	{"g", "a\x00", ErrInvalidTopicFilter},
	{"g", "$share/h/f", ErrInvalidTopicFilter},
	{"g", "\xc3", ErrInvalidTopicFilter},
}

func TestShareTopicsSplit(t *testing.T) {
	for _, c := range shareTopics {
		s, err := SplitShareTopic(c.topic)
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("SplitShareTopic(%.40q) = %v, want %v", c.topic, err, c.want)
			continue
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%v does not match ErrInvalidArgument", err)
			}
			if s != (SharedTopic{}) {
				t.Errorf("SplitShareTopic(%.40q) returned %+v with its error", c.topic, s)
			}
			if _, err2 := ACLFilter(c.topic); err2 != err {
				t.Errorf("ACLFilter(%.40q) = %v, split %v", c.topic, err2, err)
			}
			continue
		}
		shared := strings.HasPrefix(c.topic, sharePrefix)
		if s.Shared != shared {
			t.Errorf("SplitShareTopic(%.40q).Shared = %v", c.topic, s.Shared)
		}
		if shared {
			if got := sharePrefix + s.Group + "/" + s.Filter; got != c.topic {
				t.Errorf("parts of %q do not rebuild it: %+v", c.topic, s)
			}
		} else if s.Filter != c.topic || s.Group != "" {
			t.Errorf("plain %q split as %+v", c.topic, s)
		}
		if f, _ := ACLFilter(c.topic); f != s.Filter {
			t.Errorf("ACLFilter(%.40q) = %q", c.topic, f)
		}
	}
}

func TestShareTopicsBuild(t *testing.T) {
	for _, c := range shareBuilds {
		topic, err := BuildShareTopic(c.group, c.filter)
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("BuildShareTopic(%q, %.40q) = %v, want %v", c.group, c.filter, err, c.want)
			continue
		}
		if err != nil {
			if topic != "" {
				t.Errorf("BuildShareTopic(%q, %.40q) returned %q with its error", c.group, c.filter, topic)
			}
			continue
		}
		s, err := SplitShareTopic(topic)
		if err != nil || !s.Shared || s.Group != c.group || s.Filter != c.filter {
			t.Errorf("SplitShareTopic(BuildShareTopic(%q, %.40q)) = %+v, %v", c.group, c.filter, s, err)
		}
	}
	if len(shareBuilds[4].filter)+len(shareBuilds[4].group)+len(sharePrefix)+1 != ShareTopicMax {
		t.Fatal("the longest case is not ShareTopicMax bytes")
	}
}

// The parts are substrings of the topic: nothing is copied.
func TestShareSplitBorrows(t *testing.T) {
	topic := strings.Clone("$share/g/a/b")
	s, err := SplitShareTopic(topic)
	if err != nil {
		t.Fatal(err)
	}
	base := uintptr(unsafe.Pointer(unsafe.StringData(topic)))
	if uintptr(unsafe.Pointer(unsafe.StringData(s.Group))) != base+7 ||
		uintptr(unsafe.Pointer(unsafe.StringData(s.Filter))) != base+9 {
		t.Error("the parts are not views of the topic")
	}
}

func TestShareSentinels(t *testing.T) {
	if ErrInvalidShareGroup.Error() != "coord: invalid share group" ||
		ErrInvalidTopicFilter.Error() != "coord: invalid topic filter" {
		t.Error("texts")
	}
	if errors.Is(ErrInvalidShareGroup, ErrInvalidTopicFilter) || errors.Is(ErrInvalidTopicFilter, ErrInvalidShareGroup) {
		t.Error("the two errors match each other")
	}
	if errors.Is(ErrInvalidShareGroup, ErrInvalidKey) || !errors.Is(ErrInvalidTopicFilter, ErrInvalidArgument) {
		t.Error("identities")
	}
}

// aclAllows reports whether ACL rule (a filter, maybe with wildcards)
// covers a subscription filter read as a topic.
func aclAllows(rule, sub string) bool {
	r, s := strings.Split(rule, "/"), strings.Split(sub, "/")
	for i, level := range r {
		if level == "#" {
			return true
		}
		if i >= len(s) || (level != "+" && level != s[i]) {
			return false
		}
	}
	return len(r) == len(s)
}

// The silent refusal: the ACL grants the service its filters and every
// replica subscribes to the shared subscription. Matched on the whole
// string, every member is refused and nothing says why; matched on
// ACLFilter, every member is granted, and a filter the ACL does not grant is
// still refused.
func TestShareACLOnTheFullStringRefusesTheGroup(t *testing.T) {
	rules := []string{"uplink/#", "devices/+/telemetry"}
	allowed := func(sub string) bool {
		for _, r := range rules {
			if aclAllows(r, sub) {
				return true
			}
		}
		return false
	}
	members := []string{"replica-a", "replica-b", "replica-c"}
	for _, filter := range []string{"uplink/#", "uplink/eu/+", "devices/d1/telemetry"} {
		if !allowed(filter) {
			t.Fatalf("the ACL does not grant %q itself", filter)
		}
		topic, err := BuildShareTopic("workers", filter)
		if err != nil {
			t.Fatal(err)
		}
		refused, granted := 0, 0
		for range members {
			if !allowed(topic) {
				refused++
			}
			f, err := ACLFilter(topic)
			if err != nil {
				t.Fatal(err)
			}
			if allowed(f) {
				granted++
			}
		}
		if refused != len(members) || granted != len(members) {
			t.Errorf("%s: %d refused on the full string, %d granted on the filter; want %d and %d",
				topic, refused, granted, len(members), len(members))
		}
	}
	topic, _ := BuildShareTopic("workers", "billing/#")
	if f, _ := ACLFilter(topic); allowed(f) {
		t.Error("splitting widened the ACL")
	}
}
