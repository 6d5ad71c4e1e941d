#version 450
in vec3 v_pos;
in vec3 v_normal;
in vec2 v_uv;
flat in uint v_material;
in vec4 v_tint;
layout(binding = 1) uniform sampler2D albedo;
layout(location = 0) out vec4 g_pos;
layout(location = 1) out vec4 g_normal;
layout(location = 2) out vec4 g_albedo;
void main() {
    g_pos = vec4(v_pos, 1.0);
    g_normal = vec4(normalize(v_normal), float(v_material));
    g_albedo = texture(albedo, v_uv) * v_tint;
}
