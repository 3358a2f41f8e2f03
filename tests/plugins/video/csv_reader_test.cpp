// The CSV reader: quoted fields with commas, doubled quotes and line breaks, the three line endings, blank lines,
// the line each record starts on, and an unclosed quote named by file and line.
#include "video/csv_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kforge/sdk/error.h"

namespace kforge::test {
namespace {

using video::CsvReader;
using video::CsvRecord;

std::vector<CsvRecord> read_records(const std::string& text) {
  CsvReader reader(text, "t.csv");
  std::vector<CsvRecord> records;
  CsvRecord record;
  while (reader.next(record)) records.push_back(record);
  return records;
}

using Fields = std::vector<std::string>;

TEST(CsvReader, QuotedFieldsHoldCommasDoubledQuotesAndLineBreaks) {
  const std::vector<CsvRecord> records = read_records(
      "videoid,name\n"
      "1,\"a, b\"\n"
      "2,\"say \"\"hi\"\"\"\n"
      "3,\"two\nlines\",x\n"
      "4,plain \"quote\" inside\n"
      "5,\"\"\n");
  ASSERT_EQ(records.size(), 6u);
  EXPECT_EQ(records[0].fields, (Fields{"videoid", "name"}));
  EXPECT_EQ(records[1].fields, (Fields{"1", "a, b"}));
  EXPECT_EQ(records[2].fields, (Fields{"2", "say \"hi\""}));
  EXPECT_EQ(records[3].fields, (Fields{"3", "two\nlines", "x"}));
  EXPECT_EQ(records[4].fields, (Fields{"4", "plain \"quote\" inside"}));
  EXPECT_EQ(records[5].fields, (Fields{"5", ""}));
  const std::vector<int64_t> lines = {records[0].line, records[1].line, records[2].line,
                                      records[3].line, records[4].line, records[5].line};
  EXPECT_EQ(lines, (std::vector<int64_t>{1, 2, 3, 4, 6, 7}));
}

TEST(CsvReader, LineEndingsBlankLinesAndEmptyFields) {
  const std::vector<CsvRecord> records = read_records("a,b\r\n\r\n,\r\nx,\"y\r\nz\"\rlast,1");
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].fields, (Fields{"a", "b"}));
  EXPECT_EQ(records[1].fields, (Fields{"", ""}));
  EXPECT_EQ(records[1].line, 3);
  EXPECT_EQ(records[2].fields, (Fields{"x", "y\r\nz"}));
  EXPECT_EQ(records[2].line, 4);
  EXPECT_EQ(records[3].fields, (Fields{"last", "1"}));
  EXPECT_EQ(records[3].line, 6);  // after the quoted line break and the lone \r
  EXPECT_TRUE(read_records("").empty());
  EXPECT_TRUE(read_records("\n\r\n").empty());
}

TEST(CsvReader, UnclosedQuoteNamesFileAndLine) {
  try {
    read_records("a,b\n1,\"open\n\nstill open");
    FAIL() << "no error";
  } catch (const sdk::Error& e) {
    EXPECT_STREQ(e.what(), "t.csv:2: a quoted field is not closed before the end of the file");
  }
}

}  // namespace
}  // namespace kforge::test
