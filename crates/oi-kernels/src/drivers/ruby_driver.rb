# oi's Ruby kernel driver: runs cells in one binding, so local variables,
# methods, classes and required libraries persist. Protocol: JSON lines on
# fd 3 (requests) and fd 4 (replies); after each cell a marker with a
# per-kernel token on stdout and stderr (see oi-kernels/src/kernel.rs).
require 'json'

# Everything runs inside a lambda, so the driver's own variables are not
# locals of the binding user code sees.
-> {

  oi_token = ENV.delete('OI_KERNEL_TOKEN') || ''
  oi_in = IO.new(3, 'r')
  oi_ctl = IO.new(4, 'w')
  oi_in.close_on_exec = true
  oi_ctl.close_on_exec = true
  oi_ctl.sync = true
  oi_out = STDOUT.dup
  oi_err = STDERR.dup
  $stdout.sync = true
  $stderr.sync = true
  oi_binding = TOPLEVEL_BINDING
  oi_state = { running: false, pending: false }

  trap('INT') do
    if oi_state[:running]
      raise Interrupt
    else
      oi_state[:pending] = true
    end
  end

  oi_send = ->(message) { oi_ctl.write(JSON.generate(message) + "\n") }
  oi_send.call({ type: 'ready', pid: Process.pid })

  while (oi_line = oi_in.gets)
    oi_request = JSON.parse(oi_line)
    break unless oi_request['type'] == 'run'
    oi_id = oi_request['id']
    oi_state[:pending] = false
    oi_send.call({ type: 'started', id: oi_id })
    oi_reply = { 'status' => 'ok' }
    begin
      oi_state[:running] = true
      raise Interrupt if oi_state[:pending]
      oi_value = oi_binding.eval(oi_request['code'], "<cell-#{oi_id}>", 1)
      oi_state[:running] = false
      puts "=> #{oi_value.inspect}" unless oi_value.nil?
    rescue Interrupt
      oi_state[:running] = false
      $stderr.puts 'Interrupted'
      oi_reply = { 'status' => 'interrupted' }
    rescue SystemExit => e
      oi_state[:running] = false
      oi_reply = { 'status' => 'error', 'error' => "SystemExit: exit #{e.status}" } unless e.success?
    rescue Exception => e # rubocop:disable Lint/RescueException
      oi_state[:running] = false
      trace = (e.backtrace || []).reject { |l| l.start_with?('-e:') }
      e.set_backtrace(trace)
      $stderr.write(e.full_message(highlight: false, order: :top))
      oi_reply = { 'status' => 'error', 'error' => "#{e.class}: #{e.message}" }
    ensure
      oi_state[:running] = false
    end
    $stdout.flush
    $stderr.flush
    oi_marker = "\e]oi;#{oi_token};#{oi_id}\a"
    oi_out.write(oi_marker)
    oi_out.flush
    oi_err.write(oi_marker)
    oi_err.flush
    oi_send.call(oi_reply.merge('type' => 'done', 'id' => oi_id))
  end
}.call
