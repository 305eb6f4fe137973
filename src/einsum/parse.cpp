// Einsum subscript parsing: the string form (letters, UTF-8 labels, ellipsis, implicit
// or explicit output, parentheses that fix the order) and the integer form.
//
// Example: "(ij,jk),kl->il" gives operands {i,j}, {j,k}, {k,l}, output {i,l} and the
// tree {(0, 1), (3, 2)}: the group (0, 1) becomes node 3, then node 3 meets operand 2.
#include <string>

#include "einsum/program.hpp"
#include "tenferro/error.hpp"

namespace tenferro::detail::einsum {
namespace {

constexpr std::string_view kOp = "einsum";

[[noreturn]] void bad(std::string_view s, std::size_t pos, const std::string& what) {
  throw ArgumentError(kOp, what + " at position " + std::to_string(pos) + " in \"" + std::string(s) + "\"");
}

bool ascii_letter(unsigned char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/// Decodes one UTF-8 code point starting at s[i] (a byte >= 0x80); advances i.
std::int64_t decode_utf8(std::string_view s, std::size_t& i) {
  const auto c0 = static_cast<unsigned char>(s[i]);
  int len = 0;
  std::int64_t cp = 0;
  if ((c0 & 0xE0) == 0xC0) len = 2, cp = c0 & 0x1F;
  else if ((c0 & 0xF0) == 0xE0) len = 3, cp = c0 & 0x0F;
  else if ((c0 & 0xF8) == 0xF0) len = 4, cp = c0 & 0x07;
  else bad(s, i, "invalid UTF-8 byte");
  if (i + static_cast<std::size_t>(len) > s.size()) bad(s, i, "truncated UTF-8 sequence");
  for (int k = 1; k < len; ++k) {
    const auto c = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
    if ((c & 0xC0) != 0x80) bad(s, i, "invalid UTF-8 sequence");
    cp = (cp << 6) | (c & 0x3F);
  }
  // Well-formed UTF-8 (RFC 3629, section 3): the shortest encoding only (an overlong
  // "\xc0\xaf" spells '/' and would let a label pose as another character), no UTF-16
  // surrogate halves (U+D800..U+DFFF), nothing above U+10FFFF.
  constexpr std::int64_t kMinForLength[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLength[len]) bad(s, i, "invalid UTF-8 sequence (overlong encoding)");
  if (cp >= 0xD800 && cp <= 0xDFFF) bad(s, i, "invalid UTF-8 sequence (UTF-16 surrogate)");
  if (cp > 0x10FFFF) bad(s, i, "invalid UTF-8 sequence (beyond U+10FFFF)");
  i += static_cast<std::size_t>(len);
  return cp;
}

}  // namespace

void Parsed::clear() noexcept {
  num_operands = 0;
  labels.clear();
  begin.clear();
  explicit_output = false;
  output.clear();
  has_tree = false;
  tree.clear();
}

void parse_subscripts(std::string_view s, Parsed& out) {
  out.clear();
  out.string_form = true;
  out.begin.push_back(0);
  bool any_paren = false;
  bool operand_open = true;   // an operand is being read (possibly empty)
  bool after_close = false;   // just closed a group: only ',', ')' or '->' may follow
  bool ellipsis_seen = false; // in the current operand (or output)
  // Order-fixing parentheses: each open group lists its members (leaf i as i, internal
  // node k as -1 - k until the operand count is known); `top` lists the top level.
  std::vector<std::vector<int>> group_stack;
  std::vector<int> top;
  int internal = 0;
  auto& steps = out.tree;
  auto reduce = [&](const std::vector<int>& members) {
    int acc = members[0];
    for (std::size_t k = 1; k < members.size(); ++k) {
      steps.emplace_back(acc, members[k]);
      acc = -1 - internal++;
    }
    return acc;
  };
  auto close_operand = [&] {
    const int idx = out.num_operands++;
    out.begin.push_back(static_cast<int>(out.labels.size()));
    if (!group_stack.empty()) group_stack.back().push_back(idx);
    else if (any_paren) top.push_back(idx);
    ellipsis_seen = false;
    operand_open = false;
  };
  std::size_t i = 0;
  for (; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == ' ') {
      ++i;
      continue;
    }
    if (c == '-') {
      if (i + 1 >= s.size() || s[i + 1] != '>') bad(s, i, "'-' not followed by '>'");
      break;
    }
    if (c == ',') {
      if (operand_open) close_operand();
      else if (!after_close) bad(s, i, "unexpected ','");
      operand_open = true;
      after_close = false;
      ++i;
      continue;
    }
    if (c == '(') {
      if (!operand_open || out.begin.back() != static_cast<int>(out.labels.size()) || ellipsis_seen)
        bad(s, i, "'(' inside an operand");
      if (!any_paren) {  // operands before the first group are top-level leaves
        for (int k = 0; k < out.num_operands; ++k) top.push_back(k);
        any_paren = true;
      }
      group_stack.emplace_back();
      ++i;
      continue;
    }
    if (c == ')') {
      if (group_stack.empty()) bad(s, i, "unbalanced ')'");
      if (operand_open) close_operand();
      else if (!after_close) bad(s, i, "unexpected ')'");
      std::vector<int> members = std::move(group_stack.back());
      group_stack.pop_back();
      if (members.empty()) bad(s, i, "empty parentheses");
      const int node = reduce(members);
      if (!group_stack.empty()) group_stack.back().push_back(node);
      else top.push_back(node);
      operand_open = false;
      after_close = true;
      ++i;
      continue;
    }
    if (after_close) bad(s, i, "expected ',', ')' or '->' after ')'");
    if (c == '.') {
      if (s.substr(i, 3) != "...") bad(s, i, "'.' that is not part of '...'");
      if (ellipsis_seen) bad(s, i, "second ellipsis in one operand");
      ellipsis_seen = true;
      out.labels.push_back(kEllipsis);
      i += 3;
      continue;
    }
    if (ascii_letter(c)) {
      out.labels.push_back(c);
      ++i;
      continue;
    }
    if (c >= 0x80) {
      out.labels.push_back(decode_utf8(s, i));
      continue;
    }
    bad(s, i, std::string("invalid character '") + static_cast<char>(c) + "'");
  }
  if (!group_stack.empty()) bad(s, i, "unbalanced '('");
  if (operand_open) {
    close_operand();  // the last operand (possibly empty, e.g. the scalar in "ij,->ij")
  } else if (!after_close) {
    bad(s, i, "missing operand");
  }
  if (any_paren) {
    (void)reduce(top);
    const int n = out.num_operands;
    for (auto& [a, b] : steps) {
      if (a < 0) a = n + (-1 - a);
      if (b < 0) b = n + (-1 - b);
    }
    out.has_tree = n >= 2;
    if (n < 2) steps.clear();
  }
  if (i < s.size()) {  // "->" output
    out.explicit_output = true;
    ellipsis_seen = false;
    for (i += 2; i < s.size();) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c == ' ') {
        ++i;
      } else if (c == '.') {
        if (s.substr(i, 3) != "...") bad(s, i, "'.' that is not part of '...'");
        if (ellipsis_seen) bad(s, i, "second ellipsis in the output");
        ellipsis_seen = true;
        out.output.push_back(kEllipsis);
        i += 3;
      } else if (ascii_letter(c)) {
        out.output.push_back(c);
        ++i;
      } else if (c >= 0x80) {
        out.output.push_back(decode_utf8(s, i));
      } else {
        bad(s, i, std::string("invalid character '") + static_cast<char>(c) + "' in the output");
      }
    }
  }
}

void parse_labels(EinsumLabels labels, std::optional<std::span<const std::int64_t>> output, Parsed& out) {
  out.clear();
  out.string_form = false;
  out.num_operands = static_cast<int>(labels.size());
  out.begin.push_back(0);
  for (std::size_t k = 0; k < labels.size(); ++k) {
    for (std::int64_t l : labels[k]) {
      if (l < 0) throw ArgumentError(kOp, "operand " + std::to_string(k) + " has negative label " + std::to_string(l) + "; labels must be >= 0");
      out.labels.push_back(l);
    }
    out.begin.push_back(static_cast<int>(out.labels.size()));
  }
  if (output) {
    out.explicit_output = true;
    for (std::int64_t l : *output) {
      if (l < 0) throw ArgumentError(kOp, "output has negative label " + std::to_string(l) + "; labels must be >= 0");
      out.output.push_back(l);
    }
  }
}

std::string utf8(std::int64_t code_point) {
  const auto cp = static_cast<std::uint32_t>(code_point);
  std::string r;
  if (cp < 0x80) {
    r += static_cast<char>(cp);
  } else if (cp < 0x800) {
    r += static_cast<char>(0xC0 | (cp >> 6));
    r += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    r += static_cast<char>(0xE0 | (cp >> 12));
    r += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    r += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    r += static_cast<char>(0xF0 | (cp >> 18));
    r += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    r += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    r += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return r;
}

std::string label_name(std::int64_t key, bool string_form) {
  if (key < 0) return "ellipsis axis " + std::to_string(-1 - key);
  if (!string_form) return "label " + std::to_string(key);
  return "'" + utf8(key) + "'";
}

}  // namespace tenferro::detail::einsum
