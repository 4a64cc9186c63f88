# help2man.awk: a program's --help text -> a man page (roff), so that the
# page and the help text have one source (the program's own usage text).
#   PROG --help | awk -f help2man.awk -v name=PROG -v section=1 \
#       -v summary="one line" -v version=X.Y.Z [-v aliases="a b"]
# The help text's shape (every FMPL tool writes it so):
#   usage: PROG ...             -> SYNOPSIS
#   paragraphs                  -> DESCRIPTION
#   heading:                    -> a section (.SH HEADING), e.g. "options:"
#     TAG   text                -> an item (.TP): TAG, then its text; lines
#           more text              indented past TAG continue the item
function esc(s) {
    gsub(/\\/, "\\e", s)
    gsub(/-/, "\\-", s)
    return s
}
function text(s) {
    s = esc(s)
    sub(/^[.']/, "\\\\\\&&", s)     # a line starting with . or ' is not a request
    return s
}
BEGIN {
    printf ".\\\" Generated from '%s --help' by tools/man/help2man.awk; edit the help text.\n", name
    printf ".TH %s %s \"\" \"FMPL %s\" \"FMPL\"\n", toupper(esc(name)), section, version
    printf ".SH NAME\n%s \\- %s\n", esc(name), esc(summary)
    state = "start"
}
state == "start" && /^usage: / {
    sub(/^usage: /, "")
    prog = $1
    $1 = ""
    sub(/^ /, "")
    printf ".SH SYNOPSIS\n.B %s\n%s\n.SH DESCRIPTION\n", esc(prog), text($0)
    state = "desc"
    next
}
/^[A-Za-z][A-Za-z ()-]*:$/ {
    h = $0
    sub(/:$/, "", h)
    printf ".SH %s\n", toupper(esc(h))
    state = "section"
    next
}
/^$/ { if (state != "start") print ".PP"; item = 0; next }
/^  +[^ ]/ && state == "section" {
    line = $0
    match(line, /^ +/)
    indent = RLENGTH
    if (item && indent > item_indent) {    # continues the item's text
        sub(/^ +/, "", line)
        print text(line)
        next
    }
    sub(/^ +/, "", line)
    # TAG ends at the first run of two or more spaces.
    if (match(line, /  +/)) {
        tag = substr(line, 1, RSTART - 1)
        rest = substr(line, RSTART + RLENGTH)
    } else {
        tag = line
        rest = ""
    }
    printf ".TP\n.B %s\n", esc(tag)
    if (rest != "")
        print text(rest)
    item = 1
    item_indent = indent
    next
}
{
    line = $0
    sub(/^ +/, "", line)
    print text(line)
}
END {
    if (aliases != "") {
        n = split(aliases, a, " ")
        printf ".SH SEE ALSO\n"
        for (i = 1; i <= n; i++)
            printf ".BR %s (%s)%s\n", esc(a[i]), section, i < n ? "," : ""
    }
}
