#include "bench/test_json.h"

#include <cstdlib>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace kaas::test {
namespace {

class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<JsonValue> ParseDocument() {
    JsonValue value;
    if (absl::Status s = ParseValue(&value, 0); !s.ok()) return s;
    SkipWhitespace();
    if (pos_ != text_.size()) return Error("trailing characters");
    return value;
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON: ", what, " at byte ", pos_));
  }

  void SkipWhitespace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
            text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool Consume(absl::string_view literal) {
    if (text_.substr(pos_, literal.size()) != literal) return false;
    pos_ += literal.size();
    return true;
  }

  absl::Status ParseValue(JsonValue* out, int depth) {
    if (depth > 64) return Error("nesting too deep");
    SkipWhitespace();
    if (pos_ >= text_.size()) return Error("unexpected end");
    const char c = text_[pos_];
    if (c == '{') return ParseObject(out, depth);
    if (c == '[') return ParseArray(out, depth);
    if (c == '"') {
      out->kind = JsonValue::Kind::kString;
      return ParseString(&out->string);
    }
    if (Consume("null")) {
      out->kind = JsonValue::Kind::kNull;
      return absl::OkStatus();
    }
    if (Consume("true")) {
      out->kind = JsonValue::Kind::kBool;
      out->boolean = true;
      return absl::OkStatus();
    }
    if (Consume("false")) {
      out->kind = JsonValue::Kind::kBool;
      out->boolean = false;
      return absl::OkStatus();
    }
    if (c == '-' || absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      return ParseNumber(out);
    }
    return Error("unexpected character");
  }

  absl::Status ParseObject(JsonValue* out, int depth) {
    out->kind = JsonValue::Kind::kObject;
    ++pos_;  // '{'
    SkipWhitespace();
    if (Consume("}")) return absl::OkStatus();
    while (true) {
      SkipWhitespace();
      if (pos_ >= text_.size() || text_[pos_] != '"') {
        return Error("expected a string key");
      }
      std::string key;
      if (absl::Status s = ParseString(&key); !s.ok()) return s;
      SkipWhitespace();
      if (!Consume(":")) return Error("expected ':'");
      JsonValue value;
      if (absl::Status s = ParseValue(&value, depth + 1); !s.ok()) return s;
      if (!out->object.emplace(key, std::move(value)).second) {
        return Error(absl::StrCat("duplicate key \"", key, "\""));
      }
      SkipWhitespace();
      if (Consume("}")) return absl::OkStatus();
      if (!Consume(",")) return Error("expected ',' or '}'");
    }
  }

  absl::Status ParseArray(JsonValue* out, int depth) {
    out->kind = JsonValue::Kind::kArray;
    ++pos_;  // '['
    SkipWhitespace();
    if (Consume("]")) return absl::OkStatus();
    while (true) {
      JsonValue value;
      if (absl::Status s = ParseValue(&value, depth + 1); !s.ok()) return s;
      out->array.push_back(std::move(value));
      SkipWhitespace();
      if (Consume("]")) return absl::OkStatus();
      if (!Consume(",")) return Error("expected ',' or ']'");
    }
  }

  absl::Status ParseNumber(JsonValue* out) {
    const size_t start = pos_;
    auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < text_.size() &&
             absl::ascii_isdigit(static_cast<unsigned char>(text_[pos_]))) {
        ++pos_;
      }
      return pos_ - from;
    };
    Consume("-");
    const size_t int_start = pos_;
    const size_t int_digits = digits();
    if (int_digits == 0) return Error("expected digits");
    if (int_digits > 1 && text_[int_start] == '0') return Error("leading zero");
    if (Consume(".") && digits() == 0) return Error("expected fraction digits");
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (!Consume("+")) Consume("-");
      if (digits() == 0) return Error("expected exponent digits");
    }
    out->kind = JsonValue::Kind::kNumber;
    out->number = std::strtod(
        std::string(text_.substr(start, pos_ - start)).c_str(), nullptr);
    return absl::OkStatus();
  }

  absl::StatusOr<uint32_t> ParseHex4() {
    if (pos_ + 4 > text_.size()) return Error("truncated \\u escape");
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_++];
      value <<= 4;
      if (c >= '0' && c <= '9') {
        value |= c - '0';
      } else if (c >= 'a' && c <= 'f') {
        value |= c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        value |= c - 'A' + 10;
      } else {
        return Error("bad hex digit in \\u escape");
      }
    }
    return value;
  }

  static void AppendUtf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  // A raw (unescaped) UTF-8 sequence starting at pos_; appends it.
  absl::Status ConsumeUtf8(std::string* out) {
    const auto byte = [&](size_t i) {
      return static_cast<uint8_t>(text_[pos_ + i]);
    };
    const uint8_t lead = byte(0);
    size_t length = 0;
    uint8_t lo = 0x80, hi = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) lo = 0xA0;
      if (lead == 0xED) hi = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) lo = 0x90;
      if (lead == 0xF4) hi = 0x8F;
    } else {
      return Error("invalid UTF-8 lead byte");
    }
    if (pos_ + length > text_.size()) return Error("truncated UTF-8");
    if (byte(1) < lo || byte(1) > hi) return Error("invalid UTF-8");
    for (size_t i = 2; i < length; ++i) {
      if (byte(i) < 0x80 || byte(i) > 0xBF) return Error("invalid UTF-8");
    }
    out->append(text_.data() + pos_, length);
    pos_ += length;
    return absl::OkStatus();
  }

  absl::Status ParseString(std::string* out) {
    ++pos_;  // '"'
    while (true) {
      if (pos_ >= text_.size()) return Error("unterminated string");
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return absl::OkStatus();
      }
      if (c < 0x20) return Error("control character in string");
      if (c >= 0x80) {
        if (absl::Status s = ConsumeUtf8(out); !s.ok()) return s;
        continue;
      }
      ++pos_;
      if (c != '\\') {
        out->push_back(static_cast<char>(c));
        continue;
      }
      if (pos_ >= text_.size()) return Error("truncated escape");
      const char e = text_[pos_++];
      switch (e) {
        case '"':
          out->push_back('"');
          break;
        case '\\':
          out->push_back('\\');
          break;
        case '/':
          out->push_back('/');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          absl::StatusOr<uint32_t> cp = ParseHex4();
          if (!cp.ok()) return cp.status();
          if (*cp >= 0xDC00 && *cp <= 0xDFFF)
            return Error("lone low surrogate");
          if (*cp >= 0xD800 && *cp <= 0xDBFF) {
            if (!Consume("\\u")) return Error("lone high surrogate");
            absl::StatusOr<uint32_t> low = ParseHex4();
            if (!low.ok()) return low.status();
            if (*low < 0xDC00 || *low > 0xDFFF) {
              return Error("bad low surrogate");
            }
            *cp = 0x10000 + ((*cp - 0xD800) << 10) + (*low - 0xDC00);
          }
          AppendUtf8(*cp, out);
          break;
        }
        default:
          return Error("invalid escape");
      }
    }
  }

  const absl::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<JsonValue> ParseJson(absl::string_view text) {
  return Parser(text).ParseDocument();
}

}  // namespace kaas::test
