# Runs nvcc for one kernels/**/*.cu -> .fatbin (invoked by kernels/CMakeLists.txt with cmake -P).
# A script rather than a bare COMMAND so that nvcc's output (the -Xptxas -v register / spill /
# shared-memory report) lands in a log file in the build tree for reading, and is printed in full
# when compilation fails.
foreach(v NVCC OPTIONS_FILE SOURCE OUTPUT DEPFILE LOG)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "nvcc_fatbin.cmake: ${v} is not set")
  endif()
endforeach()

execute_process(
  COMMAND "${NVCC}" --options-file "${OPTIONS_FILE}" -fatbin -o "${OUTPUT}.tmp"
          -MD -MF "${DEPFILE}" -MT "${OUTPUT}" "${SOURCE}"
  OUTPUT_VARIABLE out
  ERROR_VARIABLE out
  RESULT_VARIABLE rc)
file(WRITE "${LOG}" "${out}")
if(NOT rc EQUAL 0)
  file(REMOVE "${OUTPUT}.tmp")
  message(FATAL_ERROR "nvcc failed (${rc}) on ${SOURCE}:\n${out}")
endif()
# Rename last so an interrupted build never leaves a truncated fatbin that looks up to date.
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
