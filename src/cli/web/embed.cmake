# Turns the web UI's page into a C source with its bytes, so the heapsift binary serves it
# with no file beside it. The page is src/cli/web/index.html with each line
# "/*@include NAME*/" replaced by the file NAME beside it (the style sheet and the
# scripts: one self-contained page, as the Content-Security-Policy wants). Run by the
# build as
#   cmake -DIN=index.html -DOUT=web_page.c -P embed.cmake
get_filename_component(dir "${IN}" DIRECTORY)
file(READ "${IN}" page)
string(REGEX MATCHALL "/\\*@include [A-Za-z0-9_]+\\.(js|css)\\*/" incs "${page}")
foreach(inc IN LISTS incs)
  string(REGEX REPLACE "^/\\*@include (.*)\\*/$" "\\1" name "${inc}")
  file(READ "${dir}/${name}" body)
  string(REPLACE "${inc}" "${body}" page "${page}")
endforeach()
file(WRITE "${OUT}.html" "${page}")
file(READ "${OUT}.html" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}.tmp"
  "/* Generated from src/cli/web/ by src/cli/web/embed.cmake: do not edit. */\n"
  "#include <stddef.h>\n"
  "const unsigned char hs_web_page[] = {\n${bytes}0};\n"
  "const size_t hs_web_page_len = ${len};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
