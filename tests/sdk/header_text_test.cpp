// strip_comments_and_whitespace: comments and layout go, tokens and literals stay.
#include "header_text.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace kforge::abi {
namespace {

TEST(HeaderText, DropsLineAndBlockComments) {
  EXPECT_EQ(strip_comments_and_whitespace("int a; // the a\n/* block\n comment */ int b;"), "int a;int b;");
}

TEST(HeaderText, KeepsOneSpaceOnlyBetweenTwoWords) {
  EXPECT_EQ(strip_comments_and_whitespace("  const   char *\n\tname ( int x ) ;\n"), "const char*name(int x);");
  EXPECT_EQ(strip_comments_and_whitespace("unsigned/**/int"), "unsigned int");
}

TEST(HeaderText, IsBlindToLayoutButNotToTokens) {
  const char* wrapped = "virtual void add(const std::string& name,\n                 Factory f) = 0;";
  EXPECT_EQ(strip_comments_and_whitespace(wrapped),
            strip_comments_and_whitespace("virtual void add(const std::string& name, Factory f) = 0;"));
  EXPECT_NE(strip_comments_and_whitespace("int a;"), strip_comments_and_whitespace("int ab;"));
  EXPECT_NE(strip_comments_and_whitespace("#define V 4u"), strip_comments_and_whitespace("#define V 5u"));
  EXPECT_EQ(strip_comments_and_whitespace("#define CAP (1u << 0)"), "#define CAP (1u<<0)");
  EXPECT_EQ(strip_comments_and_whitespace("#define F(x) (x)"), "#define F(x)(x)");
}

TEST(HeaderText, JoinsSplicedLines) {
  EXPECT_EQ(strip_comments_and_whitespace("#define X(a) \\\n  f(a)   \\\n  g(a)\n"), "#define X(a)f(a)g(a)");
}

TEST(HeaderText, KeepsStringAndCharacterLiteralsVerbatim) {
  EXPECT_EQ(strip_comments_and_whitespace(R"(s = "a  // not a comment /* nor this */ \" b"; c = '"';)"),
            R"(s="a  // not a comment /* nor this */ \" b";c='"';)");
  EXPECT_EQ(strip_comments_and_whitespace("#define STR \"x\""), "#define STR\"x\"");
}

TEST(HeaderText, RefusesWhatItCannotReadNamingTheLine) {
  try {
    strip_comments_and_whitespace("int a;\n/* open");
    FAIL() << "an unterminated comment was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "line 2: unterminated /* comment");
  }
  EXPECT_THROW(strip_comments_and_whitespace("s = \"open\n"), std::invalid_argument);
  EXPECT_THROW(strip_comments_and_whitespace("s = R\"(raw)\";"), std::invalid_argument);
}

}  // namespace
}  // namespace kforge::abi
