// Unit tests for hsns/json_fields.h (strict request-body reading) and hsns/problem.h.
#include "hsns/json_fields.h"

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hsns/problem.h"

namespace hsns {
namespace {

using nlohmann::json;

// True when the problem lists `name` with a reason containing `reason_part`.
::testing::AssertionResult names(const Problem& p, const std::string& name,
                                 const std::string& reason_part = "") {
  for (const auto& ip : p.invalid_params) {
    if (ip.name == name && ip.reason.find(reason_part) != std::string::npos)
      return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no invalid_param '" << name << "' with reason containing '"
                                       << reason_part << "' in " << p.to_json().dump();
}

std::string repeat(std::string_view s, std::size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

// ---------------------------------------------------------------------------------------------------
// parse_json_object

void expect_malformed(const tl::expected<json, Problem>& r, const std::string& detail_part) {
  ASSERT_FALSE(r.has_value()) << r->dump();
  EXPECT_EQ(r.error().status, 400);
  EXPECT_EQ(r.error().slug, "malformed-body");
  EXPECT_EQ(r.error().type(), "urn:hsns:problem:malformed-body");
  EXPECT_NE(r.error().detail.find(detail_part), std::string::npos) << r.error().detail;
}

TEST(ParseJsonObject, AcceptsObjects) {
  const auto r = parse_json_object(R"({"name": "a", "n": [1, 2, {"x": null}], "ok": true})");
  ASSERT_TRUE(r.has_value()) << r.error().detail;
  EXPECT_EQ((*r)["name"], "a");
  EXPECT_EQ((*r)["n"].size(), 3u);
  EXPECT_TRUE((*r)["ok"].get<bool>());
  ASSERT_TRUE(parse_json_object("{}").has_value());
  EXPECT_TRUE(parse_json_object("{}")->empty());
  EXPECT_TRUE(parse_json_object(" \n\t{ } \r\n").has_value());
}

TEST(ParseJsonObject, Empty) {
  expect_malformed(parse_json_object(""), "empty");
}

TEST(ParseJsonObject, NotAnObject) {
  expect_malformed(parse_json_object("[1, 2]"), "must be a JSON object, not array");
  expect_malformed(parse_json_object(R"("text")"), "not string");
  expect_malformed(parse_json_object("42"), "not integer");
  expect_malformed(parse_json_object("-1"), "not integer");
  expect_malformed(parse_json_object("1.5"), "not number");
  expect_malformed(parse_json_object("true"), "not boolean");
  expect_malformed(parse_json_object("null"), "not null");
  expect_malformed(parse_json_object("   "), "not valid JSON");
}

TEST(ParseJsonObject, MalformedReportsByteOffset) {
  expect_malformed(parse_json_object(R"({"a":})"), "error at byte 6");
  expect_malformed(parse_json_object(R"({"a":1,})"), "error at byte 8");
  expect_malformed(parse_json_object(R"({"a":1} x)"), "error at byte 9");  // trailing garbage
  expect_malformed(parse_json_object("{"), "error at byte 2");             // truncated
  expect_malformed(parse_json_object("nul"), "error at byte 4");
  expect_malformed(parse_json_object("{'a': 1}"), "error at byte 2");  // single quotes
  expect_malformed(parse_json_object(R"({"a": 01})"), "not valid JSON");
  expect_malformed(parse_json_object(R"({"a": 1} /* comment */)"), "not valid JSON");
  expect_malformed(parse_json_object(R"({"a": NaN})"), "not valid JSON");
}

TEST(ParseJsonObject, InvalidTextInStrings) {
  expect_malformed(parse_json_object("{\"a\": \"\xff\"}"), "not valid JSON");         // not UTF-8
  expect_malformed(parse_json_object("{\"a\": \"\xc3\"}"), "not valid JSON");         // truncated UTF-8
  expect_malformed(parse_json_object(R"({"a": "\ud800"})"), "not valid JSON");        // lone surrogate
  expect_malformed(parse_json_object("{\"a\": \"line\nbreak\"}"), "not valid JSON");  // raw control char
  expect_malformed(parse_json_object(R"({"a": "\x"})"), "not valid JSON");
  const auto ok = parse_json_object(R"({"a": "caf\u00e9 \ud83d\ude00"})");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ((*ok)["a"], "caf\xc3\xa9 \xf0\x9f\x98\x80");
}

TEST(ParseJsonObject, NumberBeyondDoubleRangeIsMalformedNotThrown) {
  tl::expected<json, Problem> r;
  EXPECT_NO_THROW(r = parse_json_object(R"({"mtu": 1e500})"));
  expect_malformed(r, "out of range");
  EXPECT_NO_THROW(r = parse_json_object(R"({"mtu": -1e400})"));
  expect_malformed(r, "out of range");
  // Integers beyond 64 bits are still valid JSON (read as floating point).
  EXPECT_TRUE(parse_json_object(R"({"n": 123456789012345678901234567890})").has_value());
}

TEST(ParseJsonObject, DepthLimit) {
  // kMaxJsonDepth levels, counting the outer object, are accepted ...
  const std::size_t inner = kMaxJsonDepth - 1;
  const auto at_limit = parse_json_object("{\"a\":" + repeat("[", inner) + repeat("]", inner) + "}");
  EXPECT_TRUE(at_limit.has_value()) << at_limit.error().detail;
  // ... one more is not.
  expect_malformed(parse_json_object("{\"a\":" + repeat("[", inner + 1) + repeat("]", inner + 1) + "}"),
                   "nested deeper than 32 levels");
  expect_malformed(
      parse_json_object(repeat(R"({"a":)", kMaxJsonDepth + 1) + "1" + repeat("}", kMaxJsonDepth + 1)),
      "nested deeper");
  // Brackets inside strings, including after escaped quotes, are not nesting.
  const std::string in_string = "{\"a\": \"" + repeat("[{", 1000) + "\\\"" + repeat("[", 100) + "\\\\\"}";
  const auto s = parse_json_object(in_string);
  ASSERT_TRUE(s.has_value()) << s.error().detail;
  EXPECT_EQ((*s)["a"].get<std::string>().size(), 2000u + 1 + 100 + 1);
  // Many sibling containers are wide, not deep.
  EXPECT_TRUE(parse_json_object("{\"a\": [" + repeat("[],", 5000) + "[]]}").has_value());
}

TEST(ParseJsonObject, NestingBombIsRejectedFast) {
  for (const std::string& bomb :
       {repeat("[", 100'000), repeat("{\"a\":", 100'000), "{\"a\":" + repeat("[", 100'000),
        repeat("[", 100'000) + repeat("]", 100'000)}) {
    const auto start = std::chrono::steady_clock::now();
    tl::expected<json, Problem> r;
    EXPECT_NO_THROW(r = parse_json_object(bomb));
    const auto elapsed = std::chrono::steady_clock::now() - start;
    expect_malformed(r, "nested deeper than 32 levels");
    EXPECT_LT(elapsed, std::chrono::milliseconds(200));
  }
}

// Repeated keys: the parser would keep the last silently, so two readers of one body could disagree.
void expect_duplicate(const tl::expected<json, Problem>& r, const std::vector<std::string>& paths) {
  ASSERT_FALSE(r.has_value()) << r->dump();
  EXPECT_EQ(r.error().status, 400);
  EXPECT_EQ(r.error().slug, "invalid-request");
  ASSERT_EQ(r.error().invalid_params.size(), paths.size()) << r.error().to_json().dump();
  for (std::size_t i = 0; i < paths.size(); ++i) {
    EXPECT_EQ(r.error().invalid_params[i].name, paths[i]);
    EXPECT_NE(r.error().invalid_params[i].reason.find("more than once"), std::string::npos);
  }
  EXPECT_EQ(r.error().detail.find("field '" + paths.front() + "': "), 0u) << r.error().detail;
}

TEST(ParseJsonStrict, DuplicateKeyAtTopLevel) {
  expect_duplicate(parse_json_object(R"({"name": "a", "cidr": "10.0.0.0/24", "name": "b"})"), {"name"});
  expect_duplicate(parse_json_object(R"({"a": 1, "a": 1})"), {"a"});  // even with the same value
  expect_duplicate(parse_json_object(R"({"a": null, "a": {"x": 1}})"), {"a"});
  // The same key written with an escape is the same key.
  expect_duplicate(parse_json_object(R"({"a": 1, "a": 2})"), {"a"});
  expect_duplicate(parse_json_object(R"({"": 1, "": 2})"), {R"([""])"});
  expect_duplicate(parse_json_object(R"({"a": 1, "b": 2, "a": 3, "b": 4, "a": 5})"), {"a", "b", "a"});
  EXPECT_EQ(parse_json_object(R"({"a": 1, "b": 2, "a": 3})").error().detail,
            "field 'a': appears more than once in its object; each key may be given only once");
}

TEST(ParseJsonStrict, DuplicateKeyInNestedObjects) {
  expect_duplicate(parse_json_object(R"({"daemon": {"version": "1", "version": "2"}})"), {"daemon.version"});
  expect_duplicate(parse_json_object(R"({"a": {"b": {"c": 1, "c": 2}}, "d": 0})"), {"a.b.c"});
  // The outer key repeated after a nested object names the outer key.
  expect_duplicate(parse_json_object(R"({"a": {"b": 1}, "a": {"b": 1}})"), {"a"});
}

TEST(ParseJsonStrict, DuplicateKeyInArraysOfObjects) {
  expect_duplicate(parse_json_object(R"({"name": "x", "allocation_pools": [
      {"start": "10.0.0.2", "end": "10.0.0.9"},
      {"start": "10.0.0.20", "end": "10.0.0.29", "start": "10.0.0.21"}]})"),
                   {"allocation_pools[1].start"});
  // Scalars and empty containers before the object count as elements.
  expect_duplicate(parse_json_object(R"({"x": [1, [], {}, "s", {"k": 1, "k": 2}]})"), {"x[4].k"});
  expect_duplicate(parse_json_object(R"({"x": [[{"k": 1}], [{"j": 0}, {"k": 1, "k": 2}]]})"), {"x[1][1].k"});
  expect_duplicate(
      parse_json_object(R"({"npus": [{"index": 0, "mac": "a"}, {"index": 1, "mac": "b", "mac": "c"}],
      "npus": []})"),
      {"npus[1].mac", "npus"});
  // Not an object at the top, but the repeated key is still named by its path.
  expect_duplicate(parse_json_strict(R"([{"a": 1}, {"a": 1, "a": 2}])"), {"[1].a"});
}

TEST(ParseJsonStrict, SameKeyInDifferentObjectsIsFine) {
  const auto r =
      parse_json_object(R"({"allocation_pools": [{"start": "a", "end": "b"}, {"start": "c", "end": "d"}],
      "start": {"start": {"start": 1}}, "end": [{"end": 1}, {"end": 2}]})");
  ASSERT_TRUE(r.has_value()) << r.error().to_json().dump();
  EXPECT_EQ((*r)["allocation_pools"][1]["start"], "c");
  EXPECT_EQ((*r)["start"]["start"]["start"], 1);
  // Keys that differ only in case are different keys.
  EXPECT_TRUE(parse_json_object(R"({"a": 1, "A": 2})").has_value());
}

TEST(ParseJsonStrict, SyntaxErrorsWinOverDuplicates) {
  expect_malformed(parse_json_object(R"({"a": 1, "a": 2,})"), "not valid JSON");
  expect_malformed(parse_json_object(R"({"a": 1, "a": 2} x)"), "not valid JSON");
}

TEST(ParseJsonStrict, ManyDuplicatesAreReportedBoundedly) {
  std::string text = "{";
  for (int i = 0; i < 10'000; ++i) text += "\"k\": " + std::to_string(i) + ",";
  text += "\"end\": 0}";
  const auto r = parse_json_object(text);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().invalid_params.size(), kMaxDuplicateKeysReported);
  EXPECT_EQ(r.error().invalid_params.front().name, "k");
  // Wide objects with distinct keys parse.
  std::string wide = "{";
  for (int i = 0; i < 10'000; ++i) wide += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ",";
  wide += "\"end\": 0}";
  const auto w = parse_json_object(wide);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->size(), 10'001u);
}

TEST(ParseJsonStrict, AcceptsAnyValueAtTheTop) {
  EXPECT_EQ(parse_json_strict("[1, 2]").value(), json::array({1, 2}));
  EXPECT_EQ(parse_json_strict("\"s\"").value(), "s");
  EXPECT_TRUE(parse_json_strict("null").value().is_null());
  expect_malformed(parse_json_strict(""), "empty");
  expect_malformed(parse_json_strict("[1,]"), "error at byte 4");
  expect_malformed(parse_json_strict(repeat("[", 40) + repeat("]", 40)), "nested deeper");
}

// ---------------------------------------------------------------------------------------------------
// FieldReader

TEST(FieldReader, StringField) {
  const json j = {{"name", "subnet-a"}, {"n", 5}, {"long", std::string(300, 'x')}, {"nil", nullptr}};
  FieldReader r(j);
  EXPECT_EQ(r.string("name", true), "subnet-a");
  EXPECT_TRUE(r.ok());
  EXPECT_FALSE(r.string("n", true).has_value());
  EXPECT_FALSE(r.string("long", true).has_value());
  EXPECT_EQ(r.string("long", true, 300), std::string(300, 'x'));
  EXPECT_FALSE(r.string("missing", false).has_value());
  EXPECT_FALSE(r.string("nil", false).has_value());  // null for an optional field: absent, no error
  const auto p = r.finish();
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->status, 400);
  EXPECT_EQ(p->slug, "invalid-request");
  EXPECT_TRUE(names(*p, "n", "must be a string, not integer"));
  EXPECT_TRUE(names(*p, "long", "at most 256 characters"));
  EXPECT_EQ(p->invalid_params.size(), 2u);
}

TEST(FieldReader, RequiredAndNull) {
  const json j = {{"nil", nullptr}};
  FieldReader r(j);
  EXPECT_TRUE(r.is_null("nil"));
  EXPECT_FALSE(r.is_null("missing"));
  EXPECT_FALSE(r.string("nil", true).has_value());
  EXPECT_FALSE(r.integer("missing", true, 0, 10).has_value());
  EXPECT_FALSE(r.boolean("b", false).has_value());
  EXPECT_EQ(r.array("arr", false), nullptr);
  EXPECT_EQ(r.object("obj", true), nullptr);
  const auto p = r.finish();
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(names(*p, "nil", "is required"));
  EXPECT_TRUE(names(*p, "missing", "is required"));
  EXPECT_TRUE(names(*p, "obj", "is required"));
  EXPECT_EQ(p->invalid_params.size(), 3u);
}

TEST(FieldReader, IntegerField) {
  const json j = json::parse(R"({"ok": 9000, "low": 575, "high": 9217, "float": 9000.0, "text": "9000",
      "flag": true, "neg": -5, "huge": 18446744073709551615, "hugeneg": -9223372036854775808,
      "min": 576, "max": 9216})");
  FieldReader r(j);
  EXPECT_EQ(r.integer("ok", true, 576, 9216), 9000);
  EXPECT_EQ(r.integer("min", true, 576, 9216), 576);
  EXPECT_EQ(r.integer("max", true, 576, 9216), 9216);
  EXPECT_FALSE(r.integer("low", true, 576, 9216).has_value());
  EXPECT_FALSE(r.integer("high", true, 576, 9216).has_value());
  EXPECT_FALSE(r.integer("float", true, 576, 9216).has_value());
  EXPECT_FALSE(r.integer("text", true, 576, 9216).has_value());
  EXPECT_FALSE(r.integer("flag", true, 0, 1).has_value());
  EXPECT_EQ(r.integer("neg", true, -10, 10), -5);
  EXPECT_FALSE(r.integer("huge", true, 0, 1000).has_value());
  EXPECT_FALSE(r.integer("hugeneg", true, 0, 1000).has_value());
  const auto p = r.finish();
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(names(*p, "low", "between 576 and 9216"));
  EXPECT_TRUE(names(*p, "high", "between 576 and 9216"));
  EXPECT_TRUE(names(*p, "float", "must be an integer, not number"));
  EXPECT_TRUE(names(*p, "text", "must be an integer, not string"));
  EXPECT_TRUE(names(*p, "flag", "must be an integer, not boolean"));
  EXPECT_TRUE(names(*p, "huge", "between 0 and 1000"));
  EXPECT_TRUE(names(*p, "hugeneg", "between 0 and 1000"));
  EXPECT_EQ(p->invalid_params.size(), 7u);
}

TEST(FieldReader, IntegerWithNegativeRange) {
  // A large unsigned value must not slip through a range whose maximum is negative.
  const json j = json::parse(R"({"u": 18446744073709551615, "v": 5, "w": -3})");
  FieldReader r(j);
  EXPECT_FALSE(r.integer("u", true, -10, -1).has_value());
  EXPECT_FALSE(r.integer("v", true, -10, -1).has_value());
  EXPECT_EQ(r.integer("w", true, -10, -1), -3);
  const auto p = r.finish();
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(names(*p, "u", "between -10 and -1"));
  EXPECT_TRUE(names(*p, "v", "between -10 and -1"));
}

TEST(FieldReader, BooleanArrayObject) {
  const json j = json::parse(R"({"b": false, "bs": "true", "b1": 1, "arr": [1, 2, 3], "arr_bad": {"x": 1},
      "obj": {"x": 1}, "obj_bad": [1], "many": [1, 2, 3, 4, 5]})");
  FieldReader r(j);
  EXPECT_EQ(r.boolean("b", true), false);
  EXPECT_FALSE(r.boolean("bs", true).has_value());
  EXPECT_FALSE(r.boolean("b1", true).has_value());
  const auto* arr = r.array("arr", true);
  ASSERT_NE(arr, nullptr);
  EXPECT_EQ(arr->size(), 3u);
  EXPECT_EQ(r.array("arr_bad", true), nullptr);
  const auto* obj = r.object("obj", true);
  ASSERT_NE(obj, nullptr);
  EXPECT_EQ((*obj)["x"], 1);
  EXPECT_EQ(r.object("obj_bad", true), nullptr);
  EXPECT_EQ(r.array("many", true, 4), nullptr);
  const auto p = r.finish();
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(names(*p, "bs", "must be a boolean, not string"));
  EXPECT_TRUE(names(*p, "b1", "must be a boolean, not integer"));
  EXPECT_TRUE(names(*p, "arr_bad", "must be an array, not object"));
  EXPECT_TRUE(names(*p, "obj_bad", "must be an object, not array"));
  EXPECT_TRUE(names(*p, "many", "at most 4 items"));
  EXPECT_EQ(p->invalid_params.size(), 5u);
}

TEST(FieldReader, UnknownFields) {
  const json j = json::parse(R"({"name": "a", "nmae": "b", "extra": null, "zzz": 1})");
  FieldReader r(j);
  EXPECT_EQ(r.string("name", true), "a");
  const auto p = r.finish();
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(names(*p, "nmae", "is not a known field"));
  EXPECT_TRUE(names(*p, "extra", "is not a known field"));  // even when null
  EXPECT_TRUE(names(*p, "zzz", "is not a known field"));
  EXPECT_EQ(p->invalid_params.size(), 3u);
}

// A key that is empty or holds characters of the path syntax is named quoted, never as an empty name.
TEST(FieldReader, UnknownKeysThatAreNotWordsAreNamedQuoted) {
  const json j = json::parse(R"({"name": "a", "": 1, "a.b": 2, "x[0]": 3, "a\"q": 4, "_ok-1": 5,
      "pools": [{"": 1}]})");
  FieldReader r(j);
  EXPECT_EQ(r.string("name", true), "a");
  r.objects("pools", true, 4, [](FieldReader&, std::size_t) {});
  const auto p = r.finish();
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(names(*p, R"([""])", "is not a known field"));
  EXPECT_TRUE(names(*p, R"(["a.b"])", "is not a known field"));
  EXPECT_TRUE(names(*p, R"(["x[0]"])", "is not a known field"));
  EXPECT_TRUE(names(*p, R"(["a\"q"])", "is not a known field"));
  EXPECT_TRUE(names(*p, "_ok-1", "is not a known field"));
  EXPECT_TRUE(names(*p, R"(pools[0][""])", "is not a known field"));
  EXPECT_EQ(p->invalid_params.size(), 6u);
  for (const auto& f : p->invalid_params) EXPECT_FALSE(f.name.empty());
  expect_duplicate(parse_json_object(R"({"a": {"": 1, "": 2}})"), {R"(a[""])"});
  expect_duplicate(parse_json_object(R"({"a b": {"c": 1, "c": 2}})"), {R"(["a b"].c)"});
}

TEST(FieldReader, FieldsAskedForButBadAreNotAlsoUnknown) {
  const json j = json::parse(R"({"n": "x"})");
  FieldReader r(j);
  EXPECT_FALSE(r.integer("n", true, 0, 1).has_value());
  const auto p = r.finish();
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->invalid_params.size(), 1u);
  EXPECT_EQ(p->invalid_params[0].name, "n");
}

TEST(FieldReader, ValidObjectFinishesClean) {
  const json j = json::parse(R"({"a": "x", "b": 2, "c": true, "d": null})");
  FieldReader r(j);
  EXPECT_EQ(r.string("a", true), "x");
  EXPECT_EQ(r.integer("b", true, 0, 5), 2);
  EXPECT_EQ(r.boolean("c", false), true);
  EXPECT_FALSE(r.string("d", false).has_value());
  EXPECT_TRUE(r.ok());
  EXPECT_FALSE(r.finish().has_value());
}

TEST(FieldReader, NestedPathsShareErrors) {
  const json j = json::parse(R"({"allocation_pools": [
      {"start": "10.0.0.2", "end": "10.0.0.9"},
      {"start": "10.0.0.20", "end": 7, "bogus": 1}]})");
  FieldReader r(j);
  const auto* pools = r.array("allocation_pools", true);
  ASSERT_NE(pools, nullptr);
  for (std::size_t i = 0; i < pools->size(); ++i) {
    FieldReader pr = r.child((*pools)[i], r.field_path("allocation_pools") + "[" + std::to_string(i) + "]");
    EXPECT_EQ(pr.field_path("end"), "allocation_pools[" + std::to_string(i) + "].end");
    (void)pr.string("start", true);
    (void)pr.string("end", true);
    (void)pr.finish();
  }
  const auto p = r.finish();
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(names(*p, "allocation_pools[1].end", "must be a string, not integer"));
  EXPECT_TRUE(names(*p, "allocation_pools[1].bogus", "is not a known field"));
  EXPECT_EQ(p->invalid_params.size(), 2u);
  EXPECT_EQ(p->detail,
            "field 'allocation_pools[1].end': must be a string, not integer (and 1 more in invalid_params)");
}

TEST(FieldReader, DeeplyNestedPathAndChildFail) {
  const json j = json::parse(R"({"a": [{"b": [{}, {}, {"c": "x"}]}]})");
  FieldReader r(j);
  EXPECT_EQ(r.field_path("a"), "a");
  (void)r.array("a", true);
  FieldReader a0 = r.child(j["a"][0], "a[0]");
  (void)a0.array("b", true);
  FieldReader b2 = a0.child(j["a"][0]["b"][2], a0.field_path("b") + "[2]");
  EXPECT_EQ(b2.field_path("c"), "a[0].b[2].c");
  EXPECT_FALSE(b2.integer("c", true, 0, 1).has_value());
  b2.fail("d", "is wrong");
  EXPECT_FALSE(r.ok());                  // the parent sees the child's errors
  EXPECT_TRUE(a0.finish().has_value());  // and any reader's finish() reports the shared list
  const auto p = r.finish();
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(names(*p, "a[0].b[2].c", "must be an integer, not string"));
  EXPECT_TRUE(names(*p, "a[0].b[2].d", "is wrong"));
}

TEST(FieldReader, NonObjectDocumentDoesNotThrow) {
  const json arr = json::array({1, 2});
  FieldReader r(arr);
  EXPECT_NO_THROW((void)r.string("name", true));
  EXPECT_FALSE(r.is_null("name"));
  std::optional<Problem> p;
  EXPECT_NO_THROW(p = r.finish());
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(names(*p, "name", "is required"));
  EXPECT_EQ(p->invalid_params.size(), 1u);
}

// ---------------------------------------------------------------------------------------------------
// Problem

TEST(FieldReader, UnsignedCountersUseTheFullRange) {
  const json body = json::parse(R"({"max":18446744073709551615,"neg":-1,"text":"1","big":300})");
  FieldReader r(body);
  EXPECT_EQ(r.unsigned_integer("max", true), UINT64_MAX);
  EXPECT_FALSE(r.unsigned_integer("neg", true));
  EXPECT_FALSE(r.unsigned_integer("text", true));
  EXPECT_FALSE(r.unsigned_integer("big", true, 255));
  EXPECT_FALSE(r.unsigned_integer("absent", false));
  auto p = r.finish();
  ASSERT_TRUE(p);
  EXPECT_TRUE(names(*p, "neg", "between 0 and 18446744073709551615"));
  EXPECT_TRUE(names(*p, "text", "must be an integer, not string"));
  EXPECT_TRUE(names(*p, "big", "between 0 and 255"));
  EXPECT_EQ(p->invalid_params.size(), 3u);
}

TEST(FieldReader, EnumerationsStringListsAndObjectArrays) {
  const json body = json::parse(R"({"state":"drift","bad":"fine","list":["a",7,"ccc"],
    "items":[{"id":"x"},3,{"id":"y","extra":true}]})");
  FieldReader r(body);
  EXPECT_EQ(r.one_of("state", true, {"conformant", "drift"}), 1u);
  EXPECT_FALSE(r.one_of("bad", true, {"conformant", "drift"}));
  const auto list = r.strings("list", true, 8, 2);
  ASSERT_TRUE(list);
  EXPECT_EQ(*list, std::vector<std::string>{"a"});
  std::vector<std::string> ids;
  EXPECT_TRUE(r.objects("items", true, 8, [&ids](FieldReader& item, std::size_t) {
    if (auto id = item.string("id", true)) ids.push_back(*id);
  }));
  EXPECT_EQ(ids, (std::vector<std::string>{"x", "y"}));
  auto e = r.finish_error();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, Error::Kind::invalid);
  std::vector<std::string> fields;
  for (const auto& f : e->fields) fields.push_back(f.field + ": " + f.reason);
  EXPECT_EQ(fields, (std::vector<std::string>{
                        "bad: must be one of conformant, drift",
                        "list[1]: must be a string of at most 2 characters",
                        "list[2]: must be a string of at most 2 characters",
                        "items[1]: must be an object",
                        "items[2].extra: is not a known field",
                    }));
}

// Every finding of a reader, "field: reason", in order.
std::vector<std::string> findings(FieldReader& r) {
  std::vector<std::string> out;
  if (auto e = r.finish_error()) {
    for (const auto& f : e->fields) out.push_back(f.field + ": " + f.reason);
  }
  return out;
}

TEST(FieldReader, NumbersAreFiniteAndBoundedWithTheBoundsWritten) {
  const json j = json::parse(R"({"ok": 2.5, "int": 3, "zero": 0, "top": 100000, "over": 100000.5,
    "neg": -1, "big": 2e6, "text": "2", "nil": null})");
  FieldReader r(j);
  EXPECT_EQ(r.number("ok", true, 0, 10, true), 2.5);
  EXPECT_EQ(r.number("int", true, 0, 10), 3.0);  // an integer is a number
  EXPECT_FALSE(r.number("zero", true, 0, 100'000, true));
  EXPECT_EQ(r.number("top", true, 0, 100'000, true), 100'000.0);
  EXPECT_FALSE(r.number("over", true, 0, 100'000, true));
  EXPECT_FALSE(r.number("neg", true, 0, 100'000));
  EXPECT_FALSE(r.number("big", true, 0, 1e6));
  EXPECT_FALSE(r.number("text", true, 0, 10));
  EXPECT_FALSE(r.number("nil", false, 0, 10));  // null of an optional field: absent (default style)
  EXPECT_FALSE(r.number("missing", false, 0, 10));
  EXPECT_EQ(findings(r), (std::vector<std::string>{
                             "zero: must be > 0 and <= 100000",
                             "over: must be > 0 and <= 100000",
                             "neg: must be >= 0 and <= 100000",
                             "big: must be >= 0 and <= 1e+06",
                             "text: must be a number, not string",
                         }));
}

TEST(FieldReader, SizedStringsNameBothBounds) {
  const json j = {{"ok", "a"}, {"empty", ""}, {"long", std::string(129, 'x')}, {"n", 5}};
  FieldReader r(j);
  EXPECT_EQ(r.sized_string("ok", true, 1, 128), "a");
  EXPECT_FALSE(r.sized_string("empty", true, 1, 128));
  EXPECT_FALSE(r.sized_string("long", true, 1, 128));
  EXPECT_FALSE(r.sized_string("n", true, 1, 128));
  EXPECT_FALSE(r.sized_string("missing", true, 1, 128));
  EXPECT_EQ(findings(r), (std::vector<std::string>{
                             "empty: must be 1 to 128 characters",
                             "long: must be 1 to 128 characters",
                             "n: must be a string, not integer",
                             "missing: is required",
                         }));
}

// An element reader may report its unknown fields before its own rules' findings; objects() then adds
// nothing twice, and finish() after report_unknown() neither.
TEST(FieldReader, UnknownFieldsAreReportedOnce) {
  const json j = json::parse(R"({"items":[{"id":"a","extra":1}],"top":2})");
  FieldReader r(j);
  r.objects("items", true, 4, [](FieldReader& item, std::size_t) {
    (void)item.string("id", true);
    item.report_unknown();
    item.fail("id", "is taken");
  });
  r.report_unknown();
  EXPECT_EQ(findings(r), (std::vector<std::string>{
                             "items[0].extra: is not a known field",
                             "items[0].id: is taken",
                             "top: is not a known field",
                         }));
}

// The style of readers whose wording predates the shared reader (the topology generator's parameters):
// bare type findings, and null as a value of the wrong type. Child readers inherit it.
TEST(FieldReader, StyleWithBareTypesAndNullAsAValue) {
  const json j = json::parse(R"({"i": "8", "f": 1.5, "nil_i": null, "nil_s": null, "nil_n": null,
    "s": 5, "b": 1, "a": {}, "o": [], "u": -1, "child": {"x": null, "y": true}})");
  FieldReader r(j, FieldStyle{.null_is_a_value = true, .name_the_found_type = false});
  EXPECT_FALSE(r.integer("i", false, 0, 10));
  EXPECT_FALSE(r.integer("f", false, 0, 10));
  EXPECT_FALSE(r.integer("nil_i", false, 0, 10));
  EXPECT_FALSE(r.string("nil_s", false));
  EXPECT_FALSE(r.number("nil_n", false, 0, 1));
  EXPECT_FALSE(r.string("s", false));
  EXPECT_FALSE(r.boolean("b", false));
  EXPECT_EQ(r.array("a", false), nullptr);
  EXPECT_EQ(r.object("o", false), nullptr);
  EXPECT_FALSE(r.unsigned_integer("u", false));
  EXPECT_FALSE(r.is_null("missing"));
  EXPECT_TRUE(r.is_null("nil_i"));
  const auto* c = r.object("child", true);
  ASSERT_NE(c, nullptr);
  FieldReader child = r.child(*c, "child");
  EXPECT_FALSE(child.integer("x", false, 0, 1));
  EXPECT_EQ(child.boolean("y", true), true);
  EXPECT_EQ(findings(r), (std::vector<std::string>{
                             "i: must be an integer",
                             "f: must be an integer",
                             "nil_i: must be an integer",
                             "nil_s: must be a string",
                             "nil_n: must be a number",
                             "s: must be a string",
                             "b: must be a boolean",
                             "a: must be an array",
                             "o: must be an object",
                             "u: must be between 0 and 18446744073709551615",
                             "child.x: must be an integer",
                         }));
}

TEST(ParseCborStrict, SameModelAndRefusalsAsJson) {
  const json doc = {{"a", 1}, {"b", {{"c", "text"}, {"d", {1, 2, 3}}}}};
  const auto bytes = json::to_cbor(doc);
  auto back = parse_cbor_strict(std::string(bytes.begin(), bytes.end()));
  ASSERT_TRUE(back) << back.error().detail;
  EXPECT_EQ(*back, doc);
  EXPECT_FALSE(parse_cbor_strict(""));
  // {"b":{"c":1,"c":2}}: the repeated key is named by its path, as parse_json_strict names it.
  auto dup =
      parse_cbor_strict(std::string("\xa1\x61"
                                    "b\xa2\x61"
                                    "c\x01\x61"
                                    "c\x02"));
  ASSERT_FALSE(dup);
  EXPECT_TRUE(names(dup.error(), "b.c", "more than once"));
  // A text string that is not UTF-8 (a lone continuation byte) could not be written as JSON again.
  auto bad_utf8 =
      parse_cbor_strict(std::string("\xa1\x61"
                                    "a\x61\x80"));
  ASSERT_FALSE(bad_utf8);
  EXPECT_NE(bad_utf8.error().detail.find("UTF-8"), std::string::npos);
  auto deep = parse_cbor_strict(std::string(kMaxJsonDepth + 1, '\x81') + '\x00');
  ASSERT_FALSE(deep);
  EXPECT_NE(deep.error().detail.find("nested deeper"), std::string::npos);
  EXPECT_TRUE(parse_cbor_strict(std::string(kMaxJsonDepth, '\x81') + '\x00'));
}

TEST(Problem, InvalidDetailAndJson) {
  const auto one = Problem::invalid("cidr", "has host bits set");
  EXPECT_EQ(one.status, 400);
  EXPECT_EQ(one.detail, "field 'cidr': has host bits set");
  const json j = one.to_json();
  EXPECT_EQ(j["type"], "urn:hsns:problem:invalid-request");
  EXPECT_EQ(j["title"], "Invalid request");
  EXPECT_EQ(j["status"], 400);
  EXPECT_EQ(j["detail"], "field 'cidr': has host bits set");
  ASSERT_EQ(j["invalid_params"].size(), 1u);
  EXPECT_EQ(j["invalid_params"][0]["name"], "cidr");
  EXPECT_EQ(j["invalid_params"][0]["reason"], "has host bits set");

  const auto three = Problem::invalid({{"a", "x"}, {"b", "y"}, {"c", "z"}});
  EXPECT_EQ(three.detail, "field 'a': x (and 2 more in invalid_params)");
  EXPECT_EQ(three.to_json()["invalid_params"].size(), 3u);
}

TEST(Problem, OtherKinds) {
  const auto m = Problem::malformed("bad");
  EXPECT_EQ(m.status, 400);
  EXPECT_FALSE(m.to_json().contains("invalid_params"));
  const auto c = Problem::conflict("name", "a subnet named x exists");
  EXPECT_EQ(c.status, 409);
  ASSERT_EQ(c.invalid_params.size(), 1u);
  EXPECT_EQ(c.invalid_params[0].reason, "a subnet named x exists");
  EXPECT_TRUE(Problem::conflict("", "busy").invalid_params.empty());
  EXPECT_EQ(Problem::unprocessable("npu", "not on host").status, 422);
  EXPECT_EQ(Problem::not_found("x").status, 404);
  EXPECT_EQ(Problem::unauthorized("x").status, 401);
  EXPECT_EQ(Problem::forbidden("x").status, 403);
  EXPECT_EQ(Problem::method_not_allowed("x").status, 405);
  EXPECT_EQ(Problem::payload_too_large("x").status, 413);
  EXPECT_EQ(Problem::unsupported_media_type("x").status, 415);
  EXPECT_EQ(Problem::unavailable("x").status, 503);
  EXPECT_EQ(Problem::internal("x").status, 500);
  const json j = Problem::internal("").to_json();
  EXPECT_FALSE(j.contains("detail"));
  EXPECT_EQ(j["type"], "urn:hsns:problem:internal");
}

}  // namespace
}  // namespace hsns
