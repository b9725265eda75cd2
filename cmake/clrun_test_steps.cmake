# The steps a generated clrun test script (see ClrunTest.cmake) is made of; run under `cmake -P`.

# Runs a command, echoing it; fails the test if it exits non-zero.
function(run_step)
  string(JOIN " " shown ${ARGN})
  message(STATUS "$ ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status)
  if(NOT status STREQUAL "0")
    message(FATAL_ERROR "step failed (exit ${status}): ${shown}")
  endif()
endfunction()

# Runs a command that must exit non-zero with output (stdout and stderr together) matching the regex.
function(expect_failure regex)
  string(JOIN " " shown ${ARGN})
  message(STATUS "$ ${shown}  (must fail)")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
  message("${output}")
  if(status STREQUAL "0")
    message(FATAL_ERROR "expected a non-zero exit, got 0: ${shown}")
  endif()
  if(NOT output MATCHES "${regex}")
    message(FATAL_ERROR "output does not match '${regex}': ${shown}")
  endif()
  message(STATUS "failed as expected (exit ${status})")
endfunction()
