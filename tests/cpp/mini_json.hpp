/*
 * tests/cpp/mini_json.hpp: just enough JSON to read the venue's answers in the C++ tests
 * (objects, arrays, strings with escapes, numbers kept as their text). Independent of the
 * library, which returns JSON as text. Throws std::runtime_error on malformed input.
 */
#ifndef PERPS_TESTS_MINI_JSON_HPP
#define PERPS_TESTS_MINI_JSON_HPP

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace mini_json {

struct Value {
    enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
    std::string text;  // a string's content, a number as written, "true"/"false"
    std::vector<Value> items;
    // An object's members, in order: keys[i] names values[i]. (Not a vector of
    // pair<string, Value>: a pair of the incomplete Value is not allowed, and clang's C++20
    // library refuses it; a vector of it is, since C++17.)
    std::vector<std::string> keys;
    std::vector<Value> values;

    bool is_null() const { return kind == Null; }
    bool is_string() const { return kind == String; }
    bool is_array() const { return kind == Array; }
    bool is_object() const { return kind == Object; }
    bool has(const std::string &key) const {
        for (const std::string &k : keys) {
            if (k == key) {
                return true;
            }
        }
        return false;
    }
    /// The field `key` of an object (a null value when absent).
    const Value &operator[](const std::string &key) const {
        for (std::size_t i = 0; i < keys.size(); ++i) {
            if (keys[i] == key) {
                return values[i];
            }
        }
        return null_value();
    }
    const Value &operator[](std::size_t i) const { return i < items.size() ? items[i] : null_value(); }
    /// A decimal the venue may write as a string or a number.
    double num() const { return kind == String || kind == Number ? std::strtod(text.c_str(), nullptr) : 0.0; }
    long long int64() const { return kind == Number ? std::strtoll(text.c_str(), nullptr, 10) : 0; }

private:
    static const Value &null_value() {
        static const Value null;
        return null;
    }
};

class Parser {
public:
    explicit Parser(const std::string &text) : s_(text) {}

    Value parse() {
        Value v = value();
        space();
        if (i_ != s_.size()) {
            fail("trailing characters");
        }
        return v;
    }

private:
    [[noreturn]] void fail(const char *what) const {
        throw std::runtime_error(std::string("mini_json: ") + what + " at " + std::to_string(i_) + " in " + s_);
    }
    void space() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) {
            ++i_;
        }
    }
    void eat(char c) {
        space();
        if (i_ >= s_.size() || s_[i_] != c) {
            fail("unexpected character");
        }
        ++i_;
    }
    void utf8(std::string &out, unsigned cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }
    unsigned hex4() {
        if (i_ + 4 > s_.size()) {
            fail("short \\u escape");
        }
        unsigned cp = static_cast<unsigned>(std::stoul(s_.substr(i_, 4), nullptr, 16));
        i_ += 4;
        return cp;
    }
    std::string string() {
        eat('"');
        std::string out;
        while (true) {
            if (i_ >= s_.size()) {
                fail("unterminated string");
            }
            char c = s_[i_++];
            if (c == '"') {
                return out;
            }
            if (c != '\\') {
                out += c;
                continue;
            }
            char e = s_.at(i_++);
            switch (e) {
            case 'n': out += '\n'; break;
            case 't': out += '\t'; break;
            case 'r': out += '\r'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'u': {
                unsigned cp = hex4();
                if (cp >= 0xD800 && cp < 0xDC00 && s_.compare(i_, 2, "\\u") == 0) {
                    i_ += 2;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (hex4() - 0xDC00);
                }
                utf8(out, cp);
                break;
            }
            default: out += e;
            }
        }
    }
    Value value() {
        space();
        if (i_ >= s_.size()) {
            fail("unexpected end");
        }
        Value v;
        char c = s_[i_];
        if (c == '{') {
            v.kind = Value::Object;
            ++i_;
            space();
            if (i_ < s_.size() && s_[i_] == '}') {
                ++i_;
                return v;
            }
            while (true) {
                std::string key = string();
                eat(':');
                v.keys.push_back(std::move(key));
                v.values.push_back(value());
                space();
                if (i_ < s_.size() && s_[i_] == ',') {
                    ++i_;
                    continue;
                }
                eat('}');
                return v;
            }
        }
        if (c == '[') {
            v.kind = Value::Array;
            ++i_;
            space();
            if (i_ < s_.size() && s_[i_] == ']') {
                ++i_;
                return v;
            }
            while (true) {
                v.items.push_back(value());
                space();
                if (i_ < s_.size() && s_[i_] == ',') {
                    ++i_;
                    continue;
                }
                eat(']');
                return v;
            }
        }
        if (c == '"') {
            v.kind = Value::String;
            v.text = string();
            return v;
        }
        std::size_t start = i_;
        while (i_ < s_.size() && std::string(",]} \n\r\t").find(s_[i_]) == std::string::npos) {
            ++i_;
        }
        v.text = s_.substr(start, i_ - start);
        if (v.text == "null") {
            v.kind = Value::Null;
        } else if (v.text == "true" || v.text == "false") {
            v.kind = Value::Bool;
        } else if (!v.text.empty() && (v.text[0] == '-' || (v.text[0] >= '0' && v.text[0] <= '9'))) {
            v.kind = Value::Number;
        } else {
            fail("unexpected token");
        }
        return v;
    }

    const std::string &s_;
    std::size_t i_ = 0;
};

inline Value parse(const std::string &text) { return Parser(text).parse(); }

/// A list answer: a bare array, or the `result` of a {page_size, result, total} envelope.
inline std::vector<Value> list(const Value &answer) {
    if (answer.is_array()) {
        return answer.items;
    }
    return answer["result"].items;
}

}  // namespace mini_json

#endif  // PERPS_TESTS_MINI_JSON_HPP
