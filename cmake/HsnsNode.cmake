# Node.js for the dashboard (web/) and the OpenAPI tests (tests/openapi): HSNS_NODE, HSNS_NPM and HSNS_NPX,
# with node's version checked against what the pinned tools need (playwright-core: 20; Redocly CLI: 20.19
# within 20.x, or 22.12). A cached node that is too old (found before scripts/install-node.sh installed a
# newer one under /usr/local/bin) is looked up again; if none is new enough, configuring stops and says so.

# hsns_node_supported(<version string> <result var>): TRUE for "v20.19.x" or later within 20, or "v22.12" on.
function(hsns_node_supported version out)
  set(ok FALSE)
  if(version MATCHES "^v([0-9]+)\\.([0-9]+)\\.")
    set(major ${CMAKE_MATCH_1})
    set(minor ${CMAKE_MATCH_2})
    if((major EQUAL 20 AND minor GREATER_EQUAL 19) OR (major EQUAL 22 AND minor GREATER_EQUAL 12) OR major GREATER 22)
      set(ok TRUE)
    endif()
  endif()
  set(${out} ${ok} PARENT_SCOPE)
endfunction()

function(hsns_node_version node out)
  execute_process(COMMAND ${node} --version OUTPUT_VARIABLE v OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

find_program(HSNS_NODE node)
if(HSNS_NODE)
  hsns_node_version(${HSNS_NODE} HSNS_NODE_VERSION)
  hsns_node_supported("${HSNS_NODE_VERSION}" HSNS_NODE_OK)
  if(NOT HSNS_NODE_OK)
    unset(HSNS_NODE CACHE)
    unset(HSNS_NPM CACHE)
    unset(HSNS_NPX CACHE)
    find_program(HSNS_NODE node)
    hsns_node_version(${HSNS_NODE} HSNS_NODE_VERSION)
    hsns_node_supported("${HSNS_NODE_VERSION}" HSNS_NODE_OK)
  endif()
endif()
find_program(HSNS_NPM npm)
find_program(HSNS_NPX npx)
if(NOT HSNS_NODE OR NOT HSNS_NPM OR NOT HSNS_NPX)
  message(FATAL_ERROR "node, npm and npx are needed for the dashboard and the OpenAPI tests: run scripts/install-deps.sh")
endif()
if(NOT HSNS_NODE_OK)
  message(FATAL_ERROR "${HSNS_NODE} is Node.js ${HSNS_NODE_VERSION}; the dashboard's and the OpenAPI tests' tools "
                      "need 20.19 or later (22.12 or later beyond 20.x): run scripts/install-deps.sh")
endif()
message(STATUS "Node.js ${HSNS_NODE_VERSION}: ${HSNS_NODE}")
