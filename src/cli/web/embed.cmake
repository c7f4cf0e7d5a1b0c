# Turns the web UI's page (src/cli/web/index.html) into a C source with its bytes, so the
# heapsift binary serves it with no file beside it. Run by the build as
#   cmake -DIN=index.html -DOUT=web_page.c -P embed.cmake
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}.tmp"
  "/* Generated from src/cli/web/index.html by src/cli/web/embed.cmake: do not edit. */\n"
  "#include <stddef.h>\n"
  "const unsigned char hs_web_page[] = {\n${bytes}0};\n"
  "const size_t hs_web_page_len = ${len};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
