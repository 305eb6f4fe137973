# ctest script (cmake -P) behind `capi_example_doc`: docs/c_abi.md must show
# tests/capi/capi_example.c verbatim, so the documented example is the tested one.
# Inputs (-D): DOC EXAMPLE
file(READ "${DOC}" doc)
file(READ "${EXAMPLE}" example)
string(FIND "${doc}" "${example}" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "${DOC} does not contain ${EXAMPLE} verbatim: update the example block")
endif()
message(STATUS "capi_example_doc: ok")
