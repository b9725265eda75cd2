# clrun_test(<name>
#   [INPUTS "<clrun_ref gen ...>"...]  commands that write the input files, one quoted string each
#   CLRUN <arg>...                     clrun's arguments (--kernel, --global, ..., kernel ARGs)
#   [EXPECTED <arg>...]                the clrun_ref command that writes the expected output
#   [COMPARE <actual> <expected> <rtol> <atol>]
#   [EXPECT_FAILURE <regex>])          instead: clrun must fail and its output must match <regex>
#
# Every file name is relative to the test's own folder, build/native/tests/<name>. The steps are written to
# build/native/tests/<name>.cmake and run in order by `cmake -P`; the first that fails fails the test.
function(clrun_test name)
  cmake_parse_arguments(PARSE_ARGV 1 T "" "EXPECT_FAILURE" "INPUTS;CLRUN;EXPECTED;COMPARE")
  if(T_UNPARSED_ARGUMENTS OR NOT T_CLRUN)
    message(FATAL_ERROR "clrun_test(${name}): needs CLRUN, got unexpected '${T_UNPARSED_ARGUMENTS}'")
  endif()
  set(work_dir "${CMAKE_CURRENT_BINARY_DIR}/tests/${name}")
  set(script "${CMAKE_CURRENT_BINARY_DIR}/tests/${name}.cmake")
  file(MAKE_DIRECTORY "${work_dir}")

  set(steps "include([==[${CMAKE_CURRENT_FUNCTION_LIST_DIR}/clrun_test_steps.cmake]==])\n")
  foreach(input IN LISTS T_INPUTS)
    separate_arguments(input_args UNIX_COMMAND "${input}")
    _clrun_quote(quoted ${input_args})
    string(APPEND steps "run_step(\"\${REF}\" ${quoted})\n")
  endforeach()
  _clrun_quote(clrun_args ${CLRUN_TEST_OPTIONS} --repeat 3 --print 4 ${T_CLRUN})
  if(DEFINED T_EXPECT_FAILURE)
    string(APPEND steps "expect_failure([==[${T_EXPECT_FAILURE}]==] \"\${CLRUN}\" ${clrun_args})\n")
  else()
    string(APPEND steps "run_step(\"\${CLRUN}\" ${clrun_args})\n")
  endif()
  if(T_EXPECTED)
    _clrun_quote(quoted ${T_EXPECTED})
    string(APPEND steps "run_step(\"\${REF}\" ${quoted})\n")
  endif()
  if(T_COMPARE)
    _clrun_quote(quoted compare ${T_COMPARE})
    string(APPEND steps "run_step(\"\${REF}\" ${quoted})\n")
  endif()
  file(WRITE "${script}" "${steps}")

  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} -DCLRUN=$<TARGET_FILE:clrun> -DREF=$<TARGET_FILE:clrun_ref> -P "${script}"
    WORKING_DIRECTORY "${work_dir}")
  set_tests_properties(${name} PROPERTIES TIMEOUT 120) # a hung kernel fails the test instead of the build
endfunction()

# Bracket-quotes each argument so spaces and semicolons survive into the generated script.
function(_clrun_quote out)
  set(quoted "")
  foreach(arg IN LISTS ARGN)
    string(APPEND quoted " [==[${arg}]==]")
  endforeach()
  set(${out} "${quoted}" PARENT_SCOPE)
endfunction()
