/**
 * The Surefire report reader of the catalog-tests interop suite: a failure or error is a failed
 * test with the exception's message, a skip is a skip, a bare test case passed, and output the
 * test printed never decides its outcome. It runs in `npm test` because the interop suite's verdict
 * rests on it and the toolchain is not there to exercise it.
 */
import t from 'tap'
import { counts, parseReport } from '../../interop/helpers/surefire.js'

const report = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="dev.iceguard.interop.RestCatalogTests" tests="5" errors="1" skipped="1" failures="1">
  <testcase name="testBasicCreateTable" classname="dev.iceguard.interop.RestCatalogTests" time="0.1"/>
  <testcase name="testConcurrentCreateTransaction" classname="dev.iceguard.interop.RestCatalogTests" time="0.2">
    <failure message="Expecting actual:&#10;  &quot;Cannot commit&quot; to start with &lt;Requirement failed&gt; &amp; more" type="java.lang.AssertionError"><![CDATA[java.lang.AssertionError: stack]]></failure>
  </testcase>
  <testcase name="replaceTableTransaction(int)[1]" classname="dev.iceguard.interop.RestCatalogTests" time="0.2">
    <error message="Malformed request: TYPE_PROMOTION_VALID" type="org.apache.iceberg.exceptions.BadRequestException"/>
  </testcase>
  <testcase name="createAndDropEmptyNamespace" classname="dev.iceguard.interop.RestCatalogTests" time="0">
    <skipped type="org.opentest4j.TestAbortedException"><![CDATA[assumption was not met]]></skipped>
  </testcase>
  <testcase name="testLoadTable" classname="dev.iceguard.interop.RestCatalogTests" time="0.3">
    <system-err><![CDATA[WARN <failure message="printed, not thrown"> <skipped/>]]></system-err>
  </testcase>
</testsuite>`

t.test('reads each test case\'s outcome and failure', async t => {
  const results = parseReport(report)
  t.same(results.map(r => [r.id, r.outcome]), [
    ['RestCatalogTests.testBasicCreateTable', 'passed'],
    ['RestCatalogTests.testConcurrentCreateTransaction', 'failed'],
    ['RestCatalogTests.replaceTableTransaction(int)[1]', 'failed'],
    ['RestCatalogTests.createAndDropEmptyNamespace', 'skipped'],
    ['RestCatalogTests.testLoadTable', 'passed']
  ])
  t.equal(results[1]?.message, 'Expecting actual:\n  "Cannot commit" to start with <Requirement failed> & more', 'entities decoded')
  t.equal(results[1]?.type, 'java.lang.AssertionError')
  t.equal(results[2]?.type, 'org.apache.iceberg.exceptions.BadRequestException')
  t.match(results[2]?.message, 'TYPE_PROMOTION_VALID')
  t.same(counts(new Map(results.map(r => [r.id, r]))), { passed: 2, failed: 2, skipped: 1 })
})
