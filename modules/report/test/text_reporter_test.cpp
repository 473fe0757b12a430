#include <gtest/gtest.h>

#include "acco/report/document.hpp"
#include "acco/report/json.hpp"

namespace acco::report {
namespace {

TEST(TextReporterTest, RendersEveryKindOfBlockInOrder) {
  Document doc;
  doc.add(Heading{"Machine"})
      .add(Fields{.fields = {{"kernel", "6.1.0"}, {"hostname", "gpu-node-7"}}})
      .add(Heading{"Topology matrix"})
      .add(plain_table({{"", "GPU0", "GPU1"}, {"GPU0", "X", "NV18"}, {"GPU1", "NV18", "X"}}))
      .add(Note{"NV18: 18 NVLinks between the two."})
      .add(Preformatted{"  [warning] pcie-link-degraded"});
  EXPECT_EQ(render_text(doc),
            "Machine\n"
            "  kernel:   6.1.0\n"
            "  hostname: gpu-node-7\n"
            "\n"
            "Topology matrix\n"
            "        GPU0  GPU1\n"
            "  GPU0  X     NV18\n"
            "  GPU1  NV18  X\n"
            "  NV18: 18 NVLinks between the two.\n"
            "  [warning] pcie-link-degraded\n");
}

TEST(TextReporterTest, AFieldWithNoValueLeavesNoTrailingBlank) {
  Document doc;
  doc.add(Fields{.fields = {{"driver", ""}, {"cuda", "13.0"}}});
  EXPECT_EQ(render_text(doc),
            "  driver:\n"
            "  cuda:   13.0\n");
}

TEST(TextReporterTest, AnEmptyDocumentIsEmpty) {
  EXPECT_EQ(render_text(Document{}), "");
}

TEST(JsonDocumentTest, TheSchemaIdSitsBesideTheFields) {
  const auto j = document("acco.example/1", {{"devices", 8}});
  EXPECT_EQ(j.at("schema"), "acco.example/1");
  EXPECT_EQ(j.at("devices"), 8);
  EXPECT_EQ(j.size(), 2U);
}

}  // namespace
}  // namespace acco::report
