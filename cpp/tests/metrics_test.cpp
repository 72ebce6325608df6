// Metrics through the header: registries as handles, isolation, the generic snapshot and the
// exporter (render_prometheus), which must write exactly the library's text.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "test_util.hpp"
#include "wkcore.hpp"

using namespace wktest;
using wkcore::MetricFamily;
using wkcore::MetricsRegistry;

namespace {

constexpr const char* kAdmissionFamily = "wukongim_slot_proposal_admission_total";

const MetricFamily* find_family(const std::vector<MetricFamily>& families, const std::string& name) {
  for (const MetricFamily& f : families)
    if (f.name == name) return &f;
  return nullptr;
}

// The value of the series whose labels are class=`cls`, result=`result`; -1 when absent.
int64_t admission_value(const std::vector<MetricFamily>& families, const std::string& cls,
                        const std::string& result) {
  const MetricFamily* f = find_family(families, kAdmissionFamily);
  if (f == nullptr) return -1;
  size_t class_at = f->labels.size(), result_at = f->labels.size();
  for (size_t i = 0; i < f->labels.size(); ++i) {
    if (f->labels[i] == "class") class_at = i;
    if (f->labels[i] == "result") result_at = i;
  }
  if (class_at == f->labels.size() || result_at == f->labels.size()) return -1;
  for (const auto& s : f->series) {
    if (s.label_values.size() == f->labels.size() && s.label_values[class_at] == cls &&
        s.label_values[result_at] == result) {
      return static_cast<int64_t>(s.value);
    }
  }
  return -1;
}

uint64_t sum_of_values(const std::vector<MetricFamily>& families) {
  uint64_t sum = 0;
  for (const auto& f : families)
    for (const auto& s : f.series) sum += s.value;
  return sum;
}

std::vector<MetricFamily> snapshot_of(const MetricsRegistry& registry) {
  auto families = registry.snapshot();
  EXPECT_TRUE(families.ok()) << families.status().str();
  return families.ok() ? std::move(families).value() : std::vector<MetricFamily>();
}

std::string render_of(const MetricsRegistry& registry) {
  auto text = registry.render();
  EXPECT_TRUE(text.ok()) << text.status().str();
  return text.ok() ? std::move(text).value() : std::string();
}

}  // namespace

TEST(Metrics, EmptyRegistryHasNoFamiliesAndRendersNothing) {
  MetricsRegistry reg = make_metrics();
  auto families = reg.snapshot();
  ASSERT_TRUE(families.ok()) << families.status().str();
  EXPECT_TRUE(families->empty());
  std::string text = "left over";
  EXPECT_OK(reg.render(text));
  EXPECT_EQ(text, "");
  EXPECT_EQ(wkcore::render_prometheus(*families), "");
}

TEST(Metrics, RenderBufferTooSmallThenSuccess) {
  MetricsRegistry reg = make_metrics();
  auto s = make_slot(500, 4, 1, true, &reg);
  ASSERT_OK(s.admit(kPropose, kBg, 1));
  ASSERT_STATUS(s.admit(kPropose, kBg, 2), WK_STATUS_PROPOSAL_THROTTLED);

  size_t need = 0;
  ASSERT_STATUS(wk_metrics_registry_render(reg.c_ptr(), nullptr, 0, &need),
                WK_STATUS_BUFFER_TOO_SMALL);
  ASSERT_GT(need, 0u);
  std::vector<uint8_t> small(8, 0xAB);
  size_t need2 = 0;
  ASSERT_STATUS(wk_metrics_registry_render(reg.c_ptr(), small.data(), small.size(), &need2),
                WK_STATUS_BUFFER_TOO_SMALL);
  EXPECT_EQ(need2, need) << "nothing counted in between";
  for (uint8_t b : small) EXPECT_EQ(b, 0xAB) << "nothing written on BUFFER_TOO_SMALL";

  std::vector<uint8_t> exact(need);
  size_t len = 0;
  ASSERT_OK(wk_metrics_registry_render(reg.c_ptr(), exact.data(), exact.size(), &len));
  EXPECT_EQ(len, need);
  std::string text(reinterpret_cast<const char*>(exact.data()), len);
  EXPECT_NE(text.find(std::string(kAdmissionFamily) +
                      "{class=\"background\",result=\"throttled\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(render_of(reg), text) << "the header's render follows the same protocol";
}

TEST(Metrics, IsolatedRegistrySeesOnlyItsSlots) {
  MetricsRegistry a = make_metrics();
  MetricsRegistry b = make_metrics();
  auto global = MetricsRegistry::global();
  ASSERT_TRUE(global.ok());
  const auto global_before = snapshot_of(*global);

  auto a1 = make_slot(601, 4, 1, true, &a);
  auto a2 = make_slot(602, 4, 1, true, &a);
  auto b1 = make_slot(603, 4, 1, false, &b);
  ASSERT_OK(a1.admit(kPropose, kBg, 1));
  ASSERT_STATUS(a1.admit(kPropose, kBg, 2), WK_STATUS_PROPOSAL_THROTTLED);
  ASSERT_OK(a2.admit(kPropose, kFg, 3));
  ASSERT_OK(a2.admit(kPropose, kFg, 4));
  ASSERT_STATUS(b1.admit(kPropose, kFg, 5), WK_STATUS_NOT_LEADER);

  auto in_a = snapshot_of(a);
  EXPECT_EQ(admission_value(in_a, "background", "ok"), 1);
  EXPECT_EQ(admission_value(in_a, "background", "throttled"), 1);
  EXPECT_EQ(admission_value(in_a, "foreground", "ok"), 2);
  EXPECT_EQ(admission_value(in_a, "foreground", "not_leader"), 0);
  EXPECT_EQ(sum_of_values(in_a), 4u) << "only a1 and a2 count here";

  auto in_b = snapshot_of(b);
  EXPECT_EQ(admission_value(in_b, "foreground", "not_leader"), 1);
  EXPECT_EQ(sum_of_values(in_b), 1u);

  EXPECT_EQ(sum_of_values(snapshot_of(*global)), sum_of_values(global_before))
      << "nothing created in a or b counts globally";

  // Counters keep the values of dropped slots.
  { wkcore::Slot gone = std::move(a1); }
  EXPECT_EQ(sum_of_values(snapshot_of(a)), 4u);
}

TEST(Metrics, NullRegistryMeansGlobal) {
  auto global = MetricsRegistry::global();
  ASSERT_TRUE(global.ok());
  const int64_t before = admission_value(snapshot_of(*global), "background", "ok");
  auto s = make_slot(610, 4, 1, true);  // nullptr: the process-wide registry
  auto explicit_global = make_slot(611, 4, 1, true, &*global);
  ASSERT_OK(s.admit(kPropose, kBg, 1));
  ASSERT_OK(explicit_global.admit(kPropose, kBg, 2));
  const int64_t after = admission_value(snapshot_of(*global), "background", "ok");
  EXPECT_EQ(after, (before < 0 ? 0 : before) + 2);
  // Two handles to the global registry see the same families.
  auto again = MetricsRegistry::global();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(render_of(*again), render_of(*global));
}

TEST(Metrics, ExporterTextEqualsTheLibrarysRender) {
  MetricsRegistry reg = make_metrics();
  auto s = make_slot(620, 3, 1, true, &reg);
  ASSERT_OK(s.admit(kPropose, kBg, 1));
  ASSERT_STATUS(s.admit(kPropose, kBg, 2), WK_STATUS_PROPOSAL_THROTTLED);
  ASSERT_OK(s.admit(kPropose, kFg, 3));
  ASSERT_OK(s.admit(kPropose, kFg, 4));
  ASSERT_STATUS(s.admit(kPropose, kFg, 5), WK_STATUS_PROPOSAL_BUSY);
  ASSERT_OK(s.demote());
  ASSERT_STATUS(s.admit(kPropose, kFg, 6), WK_STATUS_NOT_LEADER);

  const std::string library = render_of(reg);
  ASSERT_FALSE(library.empty());
  EXPECT_EQ(wkcore::render_prometheus(snapshot_of(reg)), library);

  // The same for the process-wide registry (whatever this process counted there).
  auto global = MetricsRegistry::global();
  ASSERT_TRUE(global.ok());
  auto g = make_slot(621, 2, 1, true);
  ASSERT_OK(g.admit(kPropose, kFg, 1));
  EXPECT_EQ(wkcore::render_prometheus(snapshot_of(*global)), render_of(*global));
}

TEST(Metrics, SnapshotHandleAndCopiedFamilies) {
  MetricsRegistry reg = make_metrics();
  auto s = make_slot(630, 4, 1, true, &reg);
  ASSERT_OK(s.admit(kPropose, kFg, 1));
  auto snap = reg.snapshot_handle();
  ASSERT_TRUE(snap.ok());
  ASSERT_GE(snap->family_count(), 1u);
  wk_metric_family raw{};
  ASSERT_OK(snap->family(0, raw));
  EXPECT_STATUS(snap->family(snap->family_count(), raw), WK_STATUS_NOT_FOUND);
  wk_metric_series series{};
  ASSERT_OK(snap->series(0, 0, series));
  EXPECT_STATUS(snap->series(0, raw.series_count, series), WK_STATUS_NOT_FOUND);

  ASSERT_OK(s.admit(kPropose, kFg, 2));  // after the snapshot: not in it
  auto families = snap->families();
  ASSERT_TRUE(families.ok());
  EXPECT_EQ(admission_value(*families, "foreground", "ok"), 1);
  EXPECT_EQ(admission_value(snapshot_of(reg), "foreground", "ok"), 2);

  // Every series has one value per label; counters are typed as such.
  const MetricFamily* f = find_family(*families, kAdmissionFamily);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->type, WK_METRIC_TYPE_COUNTER);
  EXPECT_FALSE(f->help.empty());
  EXPECT_EQ(f->series.size(), 8u) << "2 classes x 4 results, zeros included";
  for (const auto& one : f->series) EXPECT_EQ(one.label_values.size(), f->labels.size());

  // The snapshot outlives its registry; the copied families outlive the snapshot.
  reg.reset();
  auto again = snap->families();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(wkcore::render_prometheus(*again), wkcore::render_prometheus(*families));
  // A clone keeps the snapshot's strings alive after the original is gone.
  auto copy = snap->clone();
  ASSERT_TRUE(copy.ok());
  snap->reset();
  auto from_copy = copy->families();
  ASSERT_TRUE(from_copy.ok());
  EXPECT_EQ(wkcore::render_prometheus(*from_copy), wkcore::render_prometheus(*families));
  EXPECT_EQ(admission_value(*families, "foreground", "ok"), 1);
}

TEST(Metrics, RegistryHandles) {
  MetricsRegistry reg = make_metrics();
  auto s = make_slot(640, 4, 1, true, &reg);
  ASSERT_OK(s.admit(kPropose, kFg, 1));
  auto clone = reg.clone();
  ASSERT_TRUE(clone.ok());
  EXPECT_EQ(clone->c_ptr(), reg.c_ptr());
  EXPECT_EQ(render_of(*clone), render_of(reg));

  MetricsRegistry moved = std::move(reg);
  EXPECT_FALSE(static_cast<bool>(reg));  // NOLINT(bugprone-use-after-move): documented
  EXPECT_STATUS(reg.snapshot().status(), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(reg.snapshot_handle().status(), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(reg.render().status(), WK_STATUS_NULL_ARGUMENT);
  std::string text = "kept";
  EXPECT_STATUS(reg.render(text), WK_STATUS_NULL_ARGUMENT);
  EXPECT_EQ(text, "kept") << "out is left alone on failure";
  EXPECT_STATUS(reg.clone().status(), WK_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(wkcore::Slot::create(641, wkcore::default_limits(), &reg).status(),
                WK_STATUS_NULL_ARGUMENT)
      << "an empty registry is not the global one";

  wkcore::MetricsSnapshot empty;
  EXPECT_EQ(empty.family_count(), 0u);
  EXPECT_STATUS(empty.families().status(), WK_STATUS_NULL_ARGUMENT);
}

TEST(Metrics, RenderPrometheusFormatsAnyFamily) {
  // Families the library does not have: the exporter names none, so any family renders.
  MetricFamily plain;
  plain.name = "test_plain";
  plain.help = "No labels.";
  plain.type = WK_METRIC_TYPE_GAUGE;
  plain.series.push_back({{}, 18446744073709551615ull});
  MetricFamily labelled;
  labelled.name = "test_labelled_total";
  labelled.help = "Back\\slash and\nnewline.";
  labelled.labels = {"a", "b"};
  labelled.series.push_back({{"x\"y", "back\\slash\nnl"}, 0});
  labelled.series.push_back({{"1", "2"}, 3});
  MetricFamily no_series;
  no_series.name = "test_empty";
  no_series.help = "";
  no_series.type = static_cast<wk_metric_type>(99);
  no_series.labels = {"z"};

  EXPECT_EQ(wkcore::render_prometheus({plain, labelled, no_series}),
            "# HELP test_plain No labels.\n"
            "# TYPE test_plain gauge\n"
            "test_plain 18446744073709551615\n"
            "# HELP test_labelled_total Back\\\\slash and\\nnewline.\n"
            "# TYPE test_labelled_total counter\n"
            "test_labelled_total{a=\"x\\\"y\",b=\"back\\\\slash\\nnl\"} 0\n"
            "test_labelled_total{a=\"1\",b=\"2\"} 3\n"
            "# HELP test_empty \n"
            "# TYPE test_empty untyped\n");
  EXPECT_STREQ(wkcore::metric_type_name(WK_METRIC_TYPE_COUNTER), "counter");
  EXPECT_STREQ(wkcore::metric_type_name(WK_METRIC_TYPE_GAUGE), "gauge");
}
