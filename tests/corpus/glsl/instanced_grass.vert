#version 450
// Instanced grass: per-instance offset from a UBO array, wind sway, flat instance tint.
layout(location = 0) in vec3 a_pos;
layout(binding = 0) uniform Field { mat4 view_proj; vec4 offsets[64]; float time; } f;
out vec2 v_blade;
flat out int v_instance;
void main() {
    vec4 o = f.offsets[gl_InstanceIndex];
    float sway = sin(f.time + o.w) * a_pos.y * 0.1;
    v_blade = vec2(a_pos.y, o.w);
    v_instance = gl_InstanceIndex;
    gl_Position = f.view_proj * vec4(a_pos + o.xyz + vec3(sway, 0.0, 0.0), 1.0);
}
