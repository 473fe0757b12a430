#include "acco/report/html.hpp"

#include <gtest/gtest.h>

namespace acco::report {
namespace {

TEST(HtmlTest, EscapeMakesTextSafeInElementsAndQuotedAttributes) {
  EXPECT_EQ(html_escape("a <b> & \"c\" 'd'"), "a &lt;b&gt; &amp; &quot;c&quot; &#39;d&#39;");
  EXPECT_EQ(html_escape("n0 GPU3"), "n0 GPU3");
  EXPECT_EQ(html_escape(""), "");
}

}  // namespace
}  // namespace acco::report
