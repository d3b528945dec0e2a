// JSON for the tests: just enough to read the venue's answers (numbers as BigDecimal, exactly
// as written), on its own so that the tests' reading of an answer is not the binding's (which
// returns the venue's text unparsed).

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

final class TestJson {
    private TestJson() {
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> obj(Object v) {
        return (Map<String, Object>) v;
    }

    /** A list answer: a bare array, or the result of a {page_size, result, total} envelope. */
    @SuppressWarnings("unchecked")
    static List<Object> rows(String answer) {
        Object v = parse(answer);
        return (List<Object>) (v instanceof List ? v : obj(v).get("result"));
    }

    /** A decimal the venue may write as a string or a number, exactly. */
    static BigDecimal dec(Object v) {
        return v instanceof BigDecimal ? (BigDecimal) v : new BigDecimal((String) v);
    }

    static Object parse(String text) {
        int[] i = {0};
        Object v = jsonValue(text, i);
        jsonSpace(text, i);
        if (i[0] != text.length()) {
            throw new IllegalArgumentException("trailing characters in " + text);
        }
        return v;
    }

    static void jsonSpace(String t, int[] i) {
        while (i[0] < t.length() && Character.isWhitespace(t.charAt(i[0]))) {
            i[0]++;
        }
    }

    static void jsonEat(String t, int[] i, char c) {
        jsonSpace(t, i);
        if (i[0] >= t.length() || t.charAt(i[0]) != c) {
            throw new IllegalArgumentException("expected '" + c + "' at " + i[0] + " in " + t);
        }
        i[0]++;
    }

    static Object jsonValue(String t, int[] i) {
        jsonSpace(t, i);
        char c = t.charAt(i[0]);
        if (c == '{') {
            Map<String, Object> o = new LinkedHashMap<>();
            i[0]++;
            jsonSpace(t, i);
            if (t.charAt(i[0]) == '}') {
                i[0]++;
                return o;
            }
            while (true) {
                String key = (String) jsonValue(t, i);
                jsonEat(t, i, ':');
                o.put(key, jsonValue(t, i));
                jsonSpace(t, i);
                if (t.charAt(i[0]) == ',') {
                    i[0]++;
                    continue;
                }
                jsonEat(t, i, '}');
                return o;
            }
        }
        if (c == '[') {
            List<Object> a = new ArrayList<>();
            i[0]++;
            jsonSpace(t, i);
            if (t.charAt(i[0]) == ']') {
                i[0]++;
                return a;
            }
            while (true) {
                a.add(jsonValue(t, i));
                jsonSpace(t, i);
                if (t.charAt(i[0]) == ',') {
                    i[0]++;
                    continue;
                }
                jsonEat(t, i, ']');
                return a;
            }
        }
        if (c == '"') {
            StringBuilder sb = new StringBuilder();
            i[0]++;
            while (t.charAt(i[0]) != '"') {
                char ch = t.charAt(i[0]);
                if (ch == '\\') {
                    char e = t.charAt(++i[0]);
                    if (e == 'u') {
                        sb.append((char) Integer.parseInt(t.substring(i[0] + 1, i[0] + 5), 16));
                        i[0] += 4;
                    } else {
                        sb.append(e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e);
                    }
                } else {
                    sb.append(ch);
                }
                i[0]++;
            }
            i[0]++;
            return sb.toString();
        }
        int start = i[0];
        while (i[0] < t.length() && ",]} \n\r\t".indexOf(t.charAt(i[0])) < 0) {
            i[0]++;
        }
        String word = t.substring(start, i[0]);
        switch (word) {
            case "null":
                return null;
            case "true":
                return Boolean.TRUE;
            case "false":
                return Boolean.FALSE;
            default:
                return new BigDecimal(word);
        }
    }

    /** A flat JSON object (no nesting) as strings, numbers and literals as written (a number
     * as BigDecimal writes it back); enough for the headers, stats and URL line. */
    static Map<String, String> flat(String text) {
        Map<String, String> result = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : obj(parse(text)).entrySet()) {
            Object v = e.getValue();
            if (v instanceof Map || v instanceof List) {
                throw new IllegalArgumentException("nested value in " + text);
            }
            result.put(e.getKey(), String.valueOf(v));
        }
        return result;
    }
}
